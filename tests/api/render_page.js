// Renders docs/api.html's script against docs/openapi.json with a minimal DOM, and prints
// how many operations and examples the page shows: `node render_page.js PAGE DOCUMENT`. Used by
// tests/api/openapi.rs to check that the page really renders the document.
"use strict";
const fs = require("fs");
const [page, documentPath] = process.argv.slice(2);
const html = fs.readFileSync(page, "utf8");
const script = html.match(/<script>([\s\S]*)<\/script>/)[1];
const elements = {};
const element = () => ({ innerHTML: "", hidden: false, dataset: {}, addEventListener() {} });
globalThis.document = {
  querySelector: (selector) => (elements[selector] ||= element()),
  getElementById: (id) => (elements[id] ||= element()),
  querySelectorAll: () => [],
};
globalThis.fetch = async (url) => {
  if (url !== "/api/rest/openapi.json") throw new Error("the page fetched " + url);
  return { ok: true, json: async () => JSON.parse(fs.readFileSync(documentPath, "utf8")) };
};
new Function(script)();
setTimeout(() => {
  const main = document.querySelector("main").innerHTML;
  const operations = (main.match(/<details class="op"/g) || []).length;
  const paths = [...main.matchAll(/<span class="path">([^<]*)<\/span>/g)].map((m) => m[1]);
  const examples = (main.match(/<pre class="example">/g) || []).length;
  console.log(JSON.stringify({ operations, paths, examples, failed: main.includes("Cannot load") }));
}, 100);
