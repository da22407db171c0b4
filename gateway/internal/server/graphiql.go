package server

import (
	"html"
	"strings"
)

// graphiqlPage is a small, self-contained GraphQL IDE page. It loads
// nothing from the network (the platform may run without internet), so it
// is not the GraphiQL bundle itself but offers its core: a query editor,
// variables, a bearer token field (kept in localStorage), a Run button
// (Ctrl-Enter) and the result, plus a schema explorer fed by introspection.
func graphiqlPage(endpoint string) string {
	return strings.ReplaceAll(graphiqlHTML, "{{ENDPOINT}}", html.EscapeString(endpoint))
}

const graphiqlHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>GraphiQL · Meshplane</title>
<style>
body { font-family: sans-serif; margin: 0; display: flex; flex-direction: column; height: 100vh; }
header { background: #1f2933; color: #fff; padding: 6px 12px; display: flex; gap: 12px; align-items: center; }
header input { flex: 1; }
main { flex: 1; display: flex; min-height: 0; }
section { flex: 1; display: flex; flex-direction: column; padding: 6px; min-width: 0; }
textarea, pre { flex: 1; font-family: monospace; font-size: 13px; margin: 0; border: 1px solid #ccc; padding: 6px; overflow: auto; }
#variables { flex: 0 0 80px; }
#types { flex: 0 0 220px; overflow: auto; font-family: monospace; font-size: 12px; border-left: 1px solid #ccc; padding: 6px; }
</style>
</head>
<body>
<header>
<strong>GraphiQL</strong><span id="endpoint">{{ENDPOINT}}</span>
<input id="token" type="password" placeholder="bearer token">
<button id="run" title="Run (Ctrl-Enter)">&#9654; Run</button>
</header>
<main>
<section><textarea id="query" spellcheck="false">{ v1 { ConfigMaps(limit: 10) { items { metadata { namespace name } } } } }</textarea>
<textarea id="variables" spellcheck="false" placeholder="variables (JSON)"></textarea></section>
<section><pre id="result"></pre></section>
<div id="types"></div>
</main>
<script>
const endpoint = document.getElementById('endpoint').textContent;
const tokenInput = document.getElementById('token');
tokenInput.value = localStorage.getItem('meshplane-graphql-token') || '';
tokenInput.addEventListener('change', () => { localStorage.setItem('meshplane-graphql-token', tokenInput.value); explore(); });
async function post(query, variables) {
  const headers = { 'Content-Type': 'application/json', 'Accept': 'application/json' };
  if (tokenInput.value) headers['Authorization'] = 'Bearer ' + tokenInput.value;
  const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  return res.json();
}
async function run() {
  const out = document.getElementById('result');
  out.textContent = 'running...';
  let variables = {};
  const v = document.getElementById('variables').value.trim();
  try { if (v) variables = JSON.parse(v); } catch (e) { out.textContent = 'variables: ' + e; return; }
  try {
    const body = await post(document.getElementById('query').value, variables);
    out.textContent = JSON.stringify(body, null, 2);
  } catch (e) { out.textContent = String(e); }
  out.setAttribute('data-done', '1');
}
async function explore() {
  try {
    const body = await post('{ __schema { queryType { fields { name description } } } }', {});
    const fields = body.data.__schema.queryType.fields;
    document.getElementById('types').textContent = 'Query\n' + fields.map(f => '  ' + f.name).join('\n');
    document.getElementById('types').style.whiteSpace = 'pre';
  } catch (e) {}
}
document.getElementById('run').addEventListener('click', run);
document.addEventListener('keydown', e => { if (e.ctrlKey && e.key === 'Enter') run(); });
explore();
</script>
</body>
</html>
`
