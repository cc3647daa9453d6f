/**
 * Rules over what the import noticed (`diagnostics`) and the rows it kept:
 * `no-dispatches` (nothing to analyze: an error, and the other rules stay
 * quiet about that capture), `dropped-records` (the producer lost or truncated records, or the stream
 * stops before its session end) and `invalid-events` (events left out of
 * time math).
 */
import { at, checkMessages as msg } from './messages';
import { round } from './factor';
import { captureFilter } from './sql';
import { defineRule, type Finding } from './types';

/** Diagnostic codes that mean records are missing. */
export const MISSING_RECORD_CODES = ['dropped-records', 'truncated-chunk', 'no-session-end', 'truncated-record'] as const;

/** `no-dispatches`: an error for a capture with no dispatch at all (valid or not). */
export const noDispatches = defineRule({
  code: 'no-dispatches',
  worst: 'error',
  shape: { capture_id: 'number', label: 'string', records: 'number?', first_message: 'string?', file: 'string?', first_line: 'number?' },
  sql: (scope) => `SELECT c.capture_id, coalesce(c.label, c.path) AS label, c.record_count AS records,
      g.first_message, g.file, g.first_line
    FROM captures c
    LEFT JOIN (SELECT capture_id, arg_min(message, coalesce(line, 0)) AS first_message, min(file) AS file, min(line) AS first_line
               FROM diagnostics WHERE severity = 'error' GROUP BY capture_id) g ON g.capture_id = c.capture_id
    LEFT JOIN (SELECT DISTINCT capture_id FROM dispatches) x ON x.capture_id = c.capture_id
    WHERE ${captureFilter(scope, 'c')} AND x.capture_id IS NULL
    ORDER BY c.capture_id`,
  evaluate: (rows) =>
    rows.map((r): Finding => ({
      code: 'no-dispatches', severity: 'error', capture_id: r.capture_id,
      message: msg.noDispatches(r.capture_id, r.label, r.records, r.first_message, at(r.file, r.first_line)), advice: msg.noDispatchesAdvice(),
      records: r.records, dispatches: 0, file: r.file, line: r.first_line,
    })),
});

/** `dropped-records` (not for a capture with no dispatches: `no-dispatches` says what matters there). */
export const droppedRecords = defineRule({
  code: 'dropped-records',
  worst: 'warning',
  shape: { capture_id: 'number', n: 'number', first_message: 'string', file: 'string?', first_line: 'number?', dropped: 'bigint?' },
  sql: (scope) => `SELECT capture_id, count(*) AS n, arg_min(message, coalesce(line, 0)) AS first_message, min(file) AS file, min(line) AS first_line,
      sum(TRY_CAST(regexp_extract(message, '(\\d+) dropped record', 1) AS BIGINT))::BIGINT AS dropped
    FROM diagnostics WHERE ${captureFilter(scope)} AND code IN (${MISSING_RECORD_CODES.map((c) => `'${c}'`).join(', ')})
      AND capture_id IN (SELECT capture_id FROM dispatches)
    GROUP BY capture_id ORDER BY capture_id`,
  evaluate: (rows) =>
    rows.map((r): Finding => ({
      code: 'dropped-records', severity: 'warning', capture_id: r.capture_id,
      message: msg.dropped(r.capture_id, r.n, r.first_message, at(r.file, r.first_line)), advice: msg.droppedAdvice(),
      diagnostics: r.n, dropped_records: r.dropped, file: r.file, line: r.first_line,
    })),
});

/** `invalid-events`. */
export const invalidEvents = defineRule({
  code: 'invalid-events',
  worst: 'error',
  shape: { capture_id: 'number', dispatches: 'number', invalid: 'number', diagnostics: 'number', first_message: 'string?', file: 'string?', first_line: 'number?' },
  sql: (scope) => `SELECT c.capture_id, coalesce(d.dispatches, 0) AS dispatches, coalesce(d.invalid, 0) AS invalid,
      coalesce(g.diagnostics, 0) AS diagnostics, g.first_message, g.file, g.first_line
    FROM captures c
    LEFT JOIN (SELECT capture_id, count(*) AS dispatches, count(*) FILTER (WHERE NOT valid) AS invalid
               FROM dispatches GROUP BY capture_id) d ON d.capture_id = c.capture_id
    LEFT JOIN (SELECT capture_id, count(*) AS diagnostics, arg_min(message, coalesce(line, 0)) AS first_message,
                      min(file) AS file, min(line) AS first_line
               FROM diagnostics WHERE code = 'invalid-events' GROUP BY capture_id) g ON g.capture_id = c.capture_id
    WHERE ${captureFilter(scope, 'c')} ORDER BY c.capture_id`,
  evaluate: (rows, { thresholds: t }) => {
    const out: Finding[] = [];
    for (const r of rows) {
      if (r.invalid === 0 && r.diagnostics === 0) continue;
      const share = r.dispatches > 0 ? r.invalid / r.dispatches : 0;
      out.push({
        code: 'invalid-events', severity: share >= t.invalid_events_error_fraction ? 'error' : 'warning', capture_id: r.capture_id,
        message: msg.invalid(r.capture_id, r.invalid, r.dispatches, share, r.first_message ?? '', at(r.file, r.first_line)), advice: msg.invalidAdvice(),
        invalid_dispatches: r.invalid, dispatches: r.dispatches, invalid_fraction: round(share, 4), diagnostics: r.diagnostics, file: r.file, line: r.first_line,
      });
    }
    return out;
  },
});
