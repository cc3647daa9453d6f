import { Store } from './src/index';
const [a, b] = process.argv.slice(2);
const s = await Store.open(':memory:');
await s.run(`ATTACH '${a}' AS a (READ_ONLY)`);
await s.run(`ATTACH '${b}' AS b (READ_ONLY)`);
const tables = (await s.rows(`SELECT table_name t FROM duckdb_tables() WHERE database_name = 'a' AND schema_name = 'main' ORDER BY 1`)).map((r) => String(r['t']));
let bad = 0;
for (const t of tables) {
  const cols = (await s.rows(`SELECT column_name c FROM duckdb_columns() WHERE database_name = 'a' AND table_name = '${t}' AND column_name <> 'imported_at' ORDER BY column_index`)).map((r) => `"${String(r['c'])}"`).join(', ');
  const n = await s.scalar(`SELECT count(*) FROM a.${t}`);
  const d1 = await s.scalar(`SELECT count(*) FROM (SELECT ${cols} FROM a.${t} EXCEPT ALL SELECT ${cols} FROM b.${t})`);
  const d2 = await s.scalar(`SELECT count(*) FROM (SELECT ${cols} FROM b.${t} EXCEPT ALL SELECT ${cols} FROM a.${t})`);
  if (Number(d1) || Number(d2)) bad++;
  console.log(t.padEnd(24), String(n).padStart(9), String(d1), String(d2));
}
console.log(bad ? `DIFFER in ${bad}` : 'EQUAL');
await s.close();
