// The text of the OS supervisor definitions `tranquil service` writes or prints (issue 16,
// docs/host.md): a systemd user unit (Linux), a launchd LaunchAgent (macOS) and a Task
// Scheduler task (Windows). Each runs `tranquil serve` on one data dir, restarts it when it
// fails, and appends its output to <dataDir>/logs/service.log. Pure: paths in, text out.
import { createHash } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { ValidationError } from '../src/domain/errors.ts';

export interface ServiceSpec {
  /** Absolute data dir the service owns (one engine per data dir: the owner lease). */
  dataDir: string;
  /** The program and its arguments up to `serve` (node, the tranquil bin). */
  command: string[];
  /** Extra `serve` arguments (--config/--workflows), absolute paths. */
  serveArgs: string[];
  /** The directory serve runs in (a relative config import resolves from here). */
  workingDir: string;
  /** Environment the service needs (TRANQUIL_BACKEND when set). */
  env: Record<string, string>;
}

export type Platform = 'linux' | 'darwin' | 'win32';

/** One name per data dir, so two projects can each have their service. */
export function serviceId(dataDir: string): string {
  return `tranquil-${createHash('sha256').update(dataDir).digest('hex').slice(0, 10)}`;
}

export const logFile = (dataDir: string): string => join(dataDir, 'logs', 'service.log');

/** Paths go into unit files whose quoting differs per format: only plain ones are accepted. */
export function checkPath(p: string, what: string): void {
  if (!isAbsolute(p)) throw new ValidationError(`${what}: expected an absolute path, got '${p}'`);
  if (/[\s"'\\%$`<>&;|\x00-\x1f\x7f]/.test(p.replace(/^[A-Za-z]:\\/, '').replaceAll('\\', '/'))) {
    throw new ValidationError(`${what}: '${p}' contains whitespace, quotes or shell characters; a service needs a plain path`);
  }
}

const argv = (s: ServiceSpec) => [...s.command, 'serve', '--data-dir', s.dataDir, ...s.serveArgs];

/** The systemd user unit (~/.config/systemd/user/<id>.service). */
export function systemdUnit(s: ServiceSpec): string {
  const env = Object.entries(s.env).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `Environment=${k}=${v}\n`).join('');
  return `# Written by \`tranquil service install\`; remove with \`tranquil service uninstall --data-dir ${s.dataDir}\`.
[Unit]
Description=Tranquil Engine serving ${s.dataDir}

[Service]
Type=simple
WorkingDirectory=${s.workingDir}
ExecStart=${argv(s).join(' ')}
${env}Restart=on-failure
RestartSec=5
KillSignal=SIGTERM
TimeoutStopSec=30
StandardOutput=append:${logFile(s.dataDir)}
StandardError=append:${logFile(s.dataDir)}

[Install]
WantedBy=default.target
`;
}

const xml = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The launchd LaunchAgent (~/Library/LaunchAgents/dev.tranquil.<id>.plist). */
export function launchAgent(s: ServiceSpec): string {
  const args = argv(s).map((a) => `    <string>${xml(a)}</string>\n`).join('');
  const env = Object.entries(s.env).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `    <key>${xml(k)}</key><string>${xml(v)}</string>\n`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>dev.tranquil.${serviceId(s.dataDir)}</string>
  <key>ProgramArguments</key>
  <array>
${args}  </array>
  <key>WorkingDirectory</key><string>${xml(s.workingDir)}</string>
${env ? `  <key>EnvironmentVariables</key>\n  <dict>\n${env}  </dict>\n` : ''}  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>ThrottleInterval</key><integer>5</integer>
  <key>StandardOutPath</key><string>${xml(logFile(s.dataDir))}</string>
  <key>StandardErrorPath</key><string>${xml(logFile(s.dataDir))}</string>
</dict>
</plist>
`;
}

/** The Task Scheduler task (schtasks /Create /XML <file> /TN <id>): at logon, restarted on
 *  failure; cmd redirects its output to the log file (tasks have no output of their own). */
export function scheduledTask(s: ServiceSpec): string {
  const set = Object.entries(s.env).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `set ${k}=${v}&& `).join('');
  const line = `/d /c "${set}${argv(s).map((a) => `"${a}"`).join(' ')} >> "${logFile(s.dataDir)}" 2>&1"`;
  return `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.4" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo><Description>Tranquil Engine serving ${xml(s.dataDir)}</Description></RegistrationInfo>
  <Triggers><LogonTrigger><Enabled>true</Enabled></LogonTrigger></Triggers>
  <Principals><Principal id="Author"><LogonType>InteractiveToken</LogonType><RunLevel>LeastPrivilege</RunLevel></Principal></Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure><Interval>PT1M</Interval><Count>999</Count></RestartOnFailure>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>cmd.exe</Command>
      <Arguments>${xml(line)}</Arguments>
      <WorkingDirectory>${xml(s.workingDir)}</WorkingDirectory>
    </Exec>
  </Actions>
</Task>
`;
}

export function unitText(platform: Platform, s: ServiceSpec): string {
  return platform === 'linux' ? systemdUnit(s) : platform === 'darwin' ? launchAgent(s) : scheduledTask(s);
}

/** Where the user installs the printed text, and the command that loads it. */
export function installHint(platform: Platform, s: ServiceSpec): string {
  const id = serviceId(s.dataDir);
  if (platform === 'linux') return `save as ~/.config/systemd/user/${id}.service, then: systemctl --user daemon-reload && systemctl --user enable --now ${id}.service`;
  if (platform === 'darwin') return `save as ~/Library/LaunchAgents/dev.tranquil.${id}.plist, then: launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/dev.tranquil.${id}.plist`;
  return `save as ${id}.xml, then: schtasks /Create /XML ${id}.xml /TN ${id} && schtasks /Run /TN ${id}`;
}
