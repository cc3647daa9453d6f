import type { CommandModule } from 'yargs';
import { ceilingCommand } from './ceiling';
import { checkCommand } from './check';
import { exportCommand } from './export';
import { notebookCommand } from './notebook';
import { reportCommand } from './report';
import { importCommand } from './import';
import { captureCommand } from './capture';
import { infoCommand } from './info';
import { sqlCommand } from './sql';
import { provenanceCommand } from './provenance';
import { pinCommand } from './pin';
import { segmentsCommand } from './segments';
import { gapsCommand } from './gaps';
import { overlapCommand } from './overlap';
import { kernelsCommand } from './kernels';
import { costCommand } from './cost';
import { scheduleCommand } from './schedule';
import { diffCommand } from './diff';
import { launchesCommand } from './launches';

/** Every verb of the CLI, in help order. */
export const COMMANDS: CommandModule<object, never>[] = [
  captureCommand as CommandModule<object, never>,
  importCommand as CommandModule<object, never>,
  infoCommand as CommandModule<object, never>,
  sqlCommand as CommandModule<object, never>,
  ceilingCommand as CommandModule<object, never>,
  checkCommand as CommandModule<object, never>,
  provenanceCommand as CommandModule<object, never>,
  pinCommand as CommandModule<object, never>,
  exportCommand as CommandModule<object, never>,
  notebookCommand as CommandModule<object, never>,
  reportCommand as CommandModule<object, never>,
  segmentsCommand as CommandModule<object, never>,
  gapsCommand as CommandModule<object, never>,
  overlapCommand as CommandModule<object, never>,
  kernelsCommand as CommandModule<object, never>,
  costCommand as CommandModule<object, never>,
  scheduleCommand as CommandModule<object, never>,
  diffCommand as CommandModule<object, never>,
  launchesCommand as CommandModule<object, never>,
];
