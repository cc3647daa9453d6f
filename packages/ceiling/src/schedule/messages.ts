/** Catalog of the schedule model's user-facing messages. */
export const scheduleMessages = {
  badEngines: (ids: readonly string[]) => `engines must be one or more distinct ids, got ${JSON.stringify(ids)}`,
  unknownEngine: (id: string, known: readonly string[]) => `unknown engine "${id}" (engines: ${known.join(', ')})`,
  notNonNegativeMs: (what: string, v: unknown) => `${what} must be a time in ms of zero or more, got ${String(v)}`,
  taskId: (name: string, id: number, at: number) => `task ${name} has id ${id} but sits at ${at}: ids must equal positions`,
  predOrder: (name: string, pred: unknown) =>
    `task ${name}: predecessor ${String(pred)} must be an earlier task (list tasks in a topological order)`,
  taskNowhere: (name: string) => `task ${name} has no engine it can run on`,
  notWhole: (what: string, v: unknown) => `${what} must be a whole number (1 or more), got ${String(v)}`,
  graphTooLarge: (stages: number, layers: number, chunks: number, max: number) =>
    `the stage graph would have ${stages} stages (${layers} layers x ${chunks} micro-batches); at most ${max}: check --layers and --tokens, or give a larger --microbatch`,
  duplicateStage: (kind: string) => `stage ${kind} is given twice`,
  noLayerStages: () => 'the stage graph needs at least one per-layer stage (qkv, attention, ffn_down, ...)',
  scaledLoop: (kind: string, engine: string) => `stage ${kind} on ${engine}: a scaled cost must refer to another engine's cost, not form a loop`,
  notOnReference: (name: string, engine: string) => `task ${name} cannot run on the reference engine ${engine}: the all-iGPU baseline needs every stage there`,
  noSamples: (kind: string, engine: string) => `stage ${kind} on ${engine}: no measured dispatches`,
  badReplicates: (v: unknown) => `bootstrap replicates must be a whole number (0 turns it off), got ${String(v)}`,
  badPower: (what: string, v: unknown) => `${what} must be a power in W of zero or more, got ${String(v)}`,
} as const;
