/**
 * Lane assignment for intervals that may overlap on one track. Perfetto's
 * JSON importer requires the complete ("X") events of one thread to nest;
 * overlapping ones that do not nest are dropped (google/perfetto#4280). So
 * each queue's dispatches are spread over lanes (one thread each) such that
 * no two intervals of a lane overlap: greedy interval partitioning in start
 * order, which uses as many lanes as the most dispatches ever in flight.
 */
export class LaneAssigner {
  private readonly ends: bigint[] = [];

  /**
   * The lane (0-based) for [start, end), given in non-decreasing start
   * order; touching intervals (end == next start) share a lane.
   */
  assign(start: bigint, end: bigint): number {
    for (let i = 0; i < this.ends.length; i++) {
      if (this.ends[i]! <= start) {
        this.ends[i] = end;
        return i;
      }
    }
    this.ends.push(end);
    return this.ends.length - 1;
  }

  /** Lanes used so far. */
  get lanes(): number {
    return this.ends.length;
  }
}
