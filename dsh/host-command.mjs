// Which capsule-host the row starts, checked before anything is spawned:
// `hostCommand` when the config names one (an absolute path), otherwise the
// host built inside this package (`make -C <package>`). Nothing is searched
// for on PATH: the row runs exactly the binary the profile names.
import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";

export const PACKAGE_ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
export const BUILT_HOST = `${PACKAGE_ROOT}/build/bin/capsule-host`;

export class RowError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const FIX =
  `build it with \`make -C ${PACKAGE_ROOT}\` (Debian/Ubuntu build dependencies: ` +
  "`apt-get install build-essential pkg-config xxd libjansson-dev libssl-dev libseccomp-dev libarchive-dev bubblewrap`), " +
  "or set the row's hostCommand to the absolute path of a built capsule-host";

function executableFile(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The host to run, or a RowError saying exactly what to do. */
export function resolveHostCommand(hostCommand) {
  if (hostCommand === undefined) {
    if (executableFile(BUILT_HOST)) return BUILT_HOST;
    throw new RowError("ROW_HOST_NOT_FOUND", `capsule-host is not built at ${BUILT_HOST}: ${FIX}`);
  }
  if (typeof hostCommand !== "string" || !isAbsolute(hostCommand))
    throw new RowError("ROW_CONFIG_INVALID", `hostCommand must be an absolute path, got ${JSON.stringify(hostCommand)}`);
  if (!executableFile(hostCommand))
    throw new RowError("ROW_HOST_NOT_FOUND", `hostCommand ${hostCommand} is not an executable file: ${FIX}`);
  // capsule-launcher and capsule-probe must sit beside it; the host itself
  // checks that and fails activation with LAUNCH_FAILED if they do not.
  return hostCommand;
}

/** activationTimeoutMs: how long DSH's startup waits for the host's publication. */
export function activationTimeout(value) {
  if (value === undefined) return 60000;
  if (!Number.isInteger(value) || value < 1 || value > 600000)
    throw new RowError("ROW_CONFIG_INVALID", `activationTimeoutMs must be an integer from 1 to 600000, got ${JSON.stringify(value)}`);
  return value;
}
