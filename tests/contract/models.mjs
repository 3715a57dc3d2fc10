// Checks docs/asyncapi.json with the official AsyncAPI parser, then generates
// client models from it with @asyncapi/modelina and writes them as sources to
// compile: TypeScript interfaces and classes, and Java classes, one file per
// model. It also checks what the document says of generators that read only
// AsyncAPI 3.0: relabeled 3.0.0, it is a valid 3.0 document, and modelina given
// it as an object makes the same interfaces. Usage:
// node tests/contract/models.mjs ASYNCAPI OUT_DIR
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Parser } from "@asyncapi/parser";
import {
  JavaFileGenerator,
  TS_COMMON_PRESET,
  TypeScriptFileGenerator,
} from "@asyncapi/modelina";

const [source, out] = process.argv.slice(2);
if (!source || !out) {
  console.error("usage: node tests/contract/models.mjs ASYNCAPI OUT_DIR");
  process.exit(2);
}
// Any diagnostic of the parser (error, warning, hint) is written out; errors fail.
const severities = ["error", "warning", "information", "hint"];
async function check(text, name) {
  const { diagnostics } = await new Parser().parse(text);
  const report = diagnostics.map((d) => ({
    severity: severities[d.severity] ?? String(d.severity),
    code: d.code,
    path: d.path.join("."),
    message: d.message,
  }));
  writeFileSync(join(out, name), JSON.stringify(report, null, 2) + "\n");
  if (report.some((d) => d.severity === "error")) {
    console.error(JSON.stringify(report, null, 2));
    process.exit(1);
  }
}
mkdirSync(out, { recursive: true });
const text = readFileSync(source, "utf8");
await check(text, "diagnostics.json");
// The copy a generator that reads only AsyncAPI 3.0 is given.
const relabeled = { ...JSON.parse(text), asyncapi: "3.0.0" };
await check(JSON.stringify(relabeled), "diagnostics-3.0.json");

// A file URL makes modelina parse the document with @asyncapi/parser, which reads
// AsyncAPI 3.1; an object would be checked against modelina's own list of versions.
const document = pathToFileURL(resolve(source)).href;

// Interfaces describe the JSON itself: the wire's property names, objects as records.
const interfaces = new TypeScriptFileGenerator({
  modelType: "interface",
  mapType: "record",
  rawPropertyNames: true,
  useJavascriptReservedKeywords: false,
});
await interfaces.generateToFiles(document, join(out, "ts", "interfaces"), { exportType: "named" });
// The same generator given the relabeled copy as an object (its own 3.0 reader).
await interfaces.generateToFiles(relabeled, join(out, "relabeled-3.0"), { exportType: "named" });

const classes = new TypeScriptFileGenerator({
  modelType: "class",
  presets: [{ preset: TS_COMMON_PRESET, options: { marshalling: true } }],
});
await classes.generateToFiles(document, join(out, "ts", "classes"), { exportType: "named" });

const java = new JavaFileGenerator({});
const javaDir = join(out, "java", "canasta", "contract");
mkdirSync(javaDir, { recursive: true });
await java.generateToFiles(document, javaDir, { packageName: "canasta.contract" });


