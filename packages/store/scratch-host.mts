import { Store } from './src/index';
const s = await Store.open(':memory:');
await s.run('SET threads = 1');
const cols = `{_line:'BIGINT', ph:'VARCHAR', name:'VARCHAR', cat:'VARCHAR', pid:'VARCHAR', tid:'VARCHAR', _ts:'VARCHAR', _dur:'VARCHAR', args:'JSON'}`;
await s.run(`CREATE TEMP TABLE p AS SELECT * FROM read_json('/tmp/part.ndjson', format='newline_delimited', columns=${cols})`);
const HOST_ARGS = `('{"pid":' || coalesce(to_json(pid)::VARCHAR, 'null') || ',"tid":' || coalesce(to_json(tid)::VARCHAR, 'null') || ',"args":' || coalesce(args::VARCHAR, 'null') || '}')`;
const variants: Record<string, string> = {
  full: `SELECT name, TRY_CAST(json_extract_string(args, '$.correlation') AS UBIGINT) AS c, ${HOST_ARGS}::JSON AS a FROM p`,
  noCorr: `SELECT name, NULL::UBIGINT AS c, ${HOST_ARGS}::JSON AS a FROM p`,
  noCast: `SELECT name, TRY_CAST(json_extract_string(args, '$.correlation') AS UBIGINT) AS c, ${HOST_ARGS} AS a FROM p`,
  neither: `SELECT name, NULL::UBIGINT AS c, ${HOST_ARGS} AS a FROM p`,
  jsonObject: `SELECT name, TRY_CAST(json_extract_string(args, '$.correlation') AS UBIGINT) AS c, json_object('pid', pid, 'tid', tid, 'args', args) AS a FROM p`,
  corrStrpos: `SELECT name, CASE WHEN strpos(args::VARCHAR, '"correlation"') > 0 THEN TRY_CAST(json_extract_string(args, '$.correlation') AS UBIGINT) END AS c, ${HOST_ARGS}::JSON AS a FROM p`,
};
const res: Record<string, number[]> = {};
for (let r = 0; r < 7; r++) for (const [k, q] of Object.entries(variants)) {
  await s.run('DROP TABLE IF EXISTS x'); const a = performance.now(); await s.run(`CREATE TEMP TABLE x AS ${q}`); (res[k] ??= []).push(performance.now() - a);
}
for (const [k, v] of Object.entries(res)) { v.sort((a, b) => a - b); console.log(k.padEnd(12), v.map((x) => x.toFixed(0)).join(' ')); }
console.log(await s.rows(`SELECT count(*) FILTER (WHERE a1 <> a2) AS d FROM (SELECT (${HOST_ARGS})::JSON::VARCHAR a1, json_object('pid', pid, 'tid', tid, 'args', args)::VARCHAR a2 FROM p)`));
console.log(await s.rows(`SELECT count(*) FILTER (WHERE args::VARCHAR LIKE '%correlation%') AS c, count(*) n FROM p`));
await s.close();
