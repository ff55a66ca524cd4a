// `tranquil service install|uninstall|status` (issue 16, docs/host.md): runs `tranquil serve`
// headless under the OS's own supervisor. On Linux it writes a systemd user unit and loads it
// with `systemctl --user`; `--print` writes nothing and prints the definition for Linux,
// macOS (LaunchAgent) or Windows (Task Scheduler) for the user to install. When no user
// systemd is reachable (a container, no login session) install still writes the unit and
// says plainly that it was not loaded; status says the same.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '../src/domain/errors.ts';
import { findServe } from '../src/adapters/http/control-client.ts';
import { checkPath, installHint, logFile, serviceId, unitText, type Platform, type ServiceSpec } from './service-units.ts';
import { CONFIG_NAMES } from './project.ts';

export interface ServiceOptions {
  dataDir?: string;
  config?: string;
  workflows?: string;
  print?: boolean;
  platform?: string;
}

/** What each subcommand reports (printed as one JSON object with --json). */
export type ServiceReport = Record<string, unknown> & { lines: string[] };

const BIN = fileURLToPath(new URL('../bin/tranquil.mjs', import.meta.url));

/** The spec from the command line: absolute paths, the running node and tranquil bin. */
export function specFrom(o: ServiceOptions, cwd = process.cwd()): ServiceSpec {
  const dataDir = resolve(cwd, o.dataDir ?? process.env.TRANQUIL_DATA_DIR ?? '.tranquil');
  if (o.config && o.workflows) throw new ValidationError('service: pass --config or --workflows, not both');
  const serveArgs: string[] = [];
  if (o.config) serveArgs.push('--config', resolve(cwd, o.config));
  else if (o.workflows) serveArgs.push('--workflows', resolve(cwd, o.workflows));
  else if (!CONFIG_NAMES.some((n) => existsSync(join(cwd, n)))) {
    throw new ValidationError('service: no workflows: pass --config <file> or --workflows <dir>, or run it where tranquil.config.ts is');
  }
  const spec: ServiceSpec = { dataDir, command: [process.execPath, BIN], serveArgs, workingDir: cwd, env: {} };
  if (process.env.TRANQUIL_BACKEND) spec.env.TRANQUIL_BACKEND = process.env.TRANQUIL_BACKEND;
  const paths: [string, string][] = [[dataDir, '--data-dir'], [cwd, 'working directory'], ...spec.command.map((c): [string, string] => [c, 'program'])];
  if (serveArgs.length === 2) paths.push([serveArgs[1]!, serveArgs[0]!]);
  for (const [p, what] of paths) checkPath(p, what);
  for (const [k, v] of Object.entries(spec.env)) if (!/^[A-Za-z0-9_.:-]+$/.test(v)) throw new ValidationError(`service: ${k}='${v}' has characters a unit file cannot carry`);
  return spec;
}

function unitPath(spec: ServiceSpec): string {
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'systemd', 'user', `${serviceId(spec.dataDir)}.service`);
}

/** `systemctl --user <args>`: its output, or why no user systemd answered. */
function systemctl(args: string[]): { ok: true; out: string } | { ok: false; reason: string; code?: number; out?: string } {
  try {
    return { ok: true, out: execFileSync('systemctl', ['--user', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 }).trim() };
  } catch (err) {
    const e = err as { code?: string; status?: number; stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') return { ok: false, reason: 'systemctl is not installed' };
    const text = `${e.stderr ?? ''}`.trim().split('\n')[0] ?? '';
    return { ok: false, reason: text || `systemctl exited ${e.status}`, code: e.status, out: `${e.stdout ?? ''}`.trim() };
  }
}

/** Whether a user systemd manager answers (pid 1 may not be systemd, or no session bus). */
function userSystemd(): { reachable: true } | { reachable: false; reason: string } {
  const r = systemctl(['show-environment']);
  return r.ok ? { reachable: true } : { reachable: false, reason: r.reason };
}

function platformOf(o: ServiceOptions): Platform {
  const p = o.platform ?? process.platform;
  if (p !== 'linux' && p !== 'darwin' && p !== 'win32') throw new ValidationError(`--platform: expected linux, darwin or win32, got '${p}'`);
  return p;
}

export function printService(o: ServiceOptions): ServiceReport {
  const platform = platformOf(o);
  const spec = specFrom(o);
  const text = unitText(platform, spec);
  return { platform, id: serviceId(spec.dataDir), text, hint: installHint(platform, spec), lines: [text.trimEnd(), `# ${installHint(platform, spec)}`] };
}

function linuxOnly(what: string): void {
  if (process.platform !== 'linux') throw new ValidationError(`service ${what} manages systemd user units (Linux); on ${process.platform} use 'tranquil service install --print' and install the printed definition`);
}

export function installService(o: ServiceOptions): ServiceReport {
  linuxOnly('install');
  const spec = specFrom(o);
  const id = `${serviceId(spec.dataDir)}.service`;
  const file = unitPath(spec);
  mkdirSync(dirname(file), { recursive: true });
  mkdirSync(dirname(logFile(spec.dataDir)), { recursive: true });
  writeFileSync(file, systemdUnitText(spec));
  const lines = [`tranquil service: wrote ${file}`];
  const sd = userSystemd();
  if (!sd.reachable) {
    lines.push(`tranquil service: NOT loaded: no user systemd is reachable (${sd.reason}); in a login session run: systemctl --user daemon-reload && systemctl --user enable --now ${id}`);
    return { unit: id, file, loaded: false, reason: sd.reason, log: logFile(spec.dataDir), lines };
  }
  const steps = [['daemon-reload'], ['enable', '--now', id]];
  for (const s of steps) {
    const r = systemctl(s);
    if (!r.ok) throw new ValidationError(`service install: systemctl --user ${s.join(' ')} failed: ${r.reason} (the unit is written at ${file})`);
  }
  lines.push(`tranquil service: ${id} enabled and started; log: ${logFile(spec.dataDir)}`);
  return { unit: id, file, loaded: true, log: logFile(spec.dataDir), lines };
}

const systemdUnitText = (spec: ServiceSpec) => unitText('linux', spec);

export function uninstallService(o: ServiceOptions): ServiceReport {
  linuxOnly('uninstall');
  const spec = specOf(o);
  const id = `${serviceId(spec.dataDir)}.service`;
  const file = unitPath(spec);
  const lines: string[] = [];
  const sd = userSystemd();
  if (sd.reachable) systemctl(['disable', '--now', id]); // not loaded: nothing to stop
  const existed = existsSync(file);
  rmSync(file, { force: true });
  if (sd.reachable) systemctl(['daemon-reload']);
  lines.push(existed ? `tranquil service: removed ${file}` : `tranquil service: no unit at ${file}`);
  if (!sd.reachable) lines.push(`tranquil service: no user systemd is reachable (${sd.reason}); nothing was stopped`);
  return { unit: id, file, removed: existed, systemd: sd.reachable, lines };
}

export function serviceStatus(o: ServiceOptions): ServiceReport {
  const spec = specOf(o);
  const id = `${serviceId(spec.dataDir)}.service`;
  const file = unitPath(spec);
  const installed = existsSync(file);
  const serving = findServe(spec.dataDir);
  const sd = process.platform === 'linux' ? userSystemd() : { reachable: false as const, reason: `not Linux (${process.platform})` };
  const report: ServiceReport = { unit: id, file, installed, dataDir: spec.dataDir, log: logFile(spec.dataDir), serving: serving ? { pid: serving.pid } : null, lines: [] };
  report.lines.push(installed ? `unit ${id}: installed at ${file}` : `unit ${id}: not installed (no ${file})`);
  if (sd.reachable) {
    const active = systemctl(['is-active', id]);
    const enabled = systemctl(['is-enabled', id]);
    report.active = active.ok ? active.out : (active.out || 'unknown');
    report.enabled = enabled.ok ? enabled.out : (enabled.out || 'unknown');
    report.lines.push(`systemd: ${report.active}, ${report.enabled}`);
  } else {
    report.systemd = { reachable: false, reason: sd.reason };
    report.lines.push(`systemd: no user systemd is reachable (${sd.reason}); cannot tell whether the unit runs`);
  }
  report.lines.push(serving ? `data dir ${spec.dataDir}: served by pid ${serving.pid}` : `data dir ${spec.dataDir}: no serve running`);
  report.lines.push(`log: ${logFile(spec.dataDir)}`);
  return report;
}

/** uninstall/status need only the data dir (no workflows). */
function specOf(o: ServiceOptions): ServiceSpec {
  const dataDir = resolve(o.dataDir ?? process.env.TRANQUIL_DATA_DIR ?? '.tranquil');
  return { dataDir, command: [], serveArgs: [], workingDir: process.cwd(), env: {} };
}
