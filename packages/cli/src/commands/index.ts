import type { CommandModule } from 'yargs';
import { ceilingCommand } from './ceiling';
import { checkCommand } from './check';
import { importCommand } from './import';
import { infoCommand } from './info';
import { sqlCommand } from './sql';
import { provenanceCommand } from './provenance';
import { pinCommand } from './pin';

/** Every verb of the CLI, in help order. */
export const COMMANDS: CommandModule<object, never>[] = [
  importCommand as CommandModule<object, never>,
  infoCommand as CommandModule<object, never>,
  sqlCommand as CommandModule<object, never>,
  ceilingCommand as CommandModule<object, never>,
  checkCommand as CommandModule<object, never>,
  provenanceCommand as CommandModule<object, never>,
  pinCommand as CommandModule<object, never>,
];
