// Generates client models from docs/asyncapi.json with @asyncapi/modelina and
// writes them as compilable sources: TypeScript (one module) and Java (one file
// per class). Usage: node tests/contract/models.mjs ASYNCAPI OUT_DIR
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
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

const classes = new TypeScriptFileGenerator({
  modelType: "class",
  presets: [{ preset: TS_COMMON_PRESET, options: { marshalling: true } }],
});
await classes.generateToFiles(document, join(out, "ts", "classes"), { exportType: "named" });

const java = new JavaFileGenerator({});
const javaDir = join(out, "java", "canasta", "contract");
mkdirSync(javaDir, { recursive: true });
await java.generateToFiles(document, javaDir, { packageName: "canasta.contract" });


