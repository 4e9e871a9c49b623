import type { RiskLevel } from '../enums.js';

// A shell command is judged by what it can do that cannot be taken back, not by whether it looks familiar.
// High: deletes, force-pushes or rewrites history, runs as root, pipes a download into a shell, formats or writes
// raw devices, changes permissions recursively, stops the machine, or runs what a string says (eval).
const HIGH_RISK: readonly RegExp[] = [
  /(^|[\s;&|(])rm\s/,
  /(^|[\s;&|(])(sudo|doas|su)(\s|$)/,
  /\bgit\s+push\b[^;&|]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s--mirror\b|\s--delete\b|\s:)/,
  /\bgit\s+(reset\s+--hard|clean\s+-[a-z]*f|filter-branch|filter-repo|branch\s+-D)\b/,
  /\b(curl|wget|fetch)\b[^|]*\|\s*(sudo\s+)?(ba|z|k|da)?sh\b/,
  /\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(python3?|node|perl|ruby)\b/,
  /\b(mkfs(\.\w+)?|fdisk|parted|wipefs|shred)\b/,
  /\bdd\s+[^;&|]*\bof=/,
  />\s*\/dev\/(sd|nvme|disk|hd)/,
  /\bchmod\s+(-R|--recursive)\b/,
  /\bchown\s+(-R|--recursive)\b/,
  /\b(shutdown|reboot|halt|poweroff)\b/,
  /\bkill(all)?\s+-9\b/,
  /(^|[\s;&|(])eval\s/,
  /\bdrop\s+(table|database|schema)\b/i,
  /\btruncate\s+table\b/i,
  /\bterraform\s+(apply|destroy)\b/,
  /\bkubectl\s+(delete|apply|replace|drain)\b/,
  /\bnpm\s+publish\b/,
  /\bdocker\s+(rm|rmi|system\s+prune|volume\s+rm)\b/,
  /\bfind\b[^;&|]*\s-delete\b/,
  /\bxargs\s+[^;&|]*\brm\b/,
];

// Low: a command whose every part only reads (a pipeline of these is still only reading).
const READ_ONLY = new Set([
  'ls',
  'pwd',
  'cat',
  'head',
  'tail',
  'less',
  'wc',
  'grep',
  'rg',
  'find',
  'tree',
  'echo',
  'which',
  'whoami',
  'date',
  'env',
  'printenv',
  'stat',
  'file',
  'du',
  'df',
  'diff',
  'sort',
  'uniq',
  'cut',
  'jq',
  'type',
]);
const READ_ONLY_GIT = /^git\s+(status|diff|log|show|branch|remote\s+-v|rev-parse|ls-files|blame)\b/;

/** Splits a command line into its simple commands (pipelines, lists, subshells), each trimmed. */
function simpleCommands(command: string): string[] {
  return command
    .split(/\|\||&&|[|;&\n()`]|\$\(/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/** True when every simple command of the line only reads. Redirection to a file is a write. */
function onlyReads(command: string): boolean {
  if (/[^2]>|^>/.test(command.replace(/2>&1|>\s*\/dev\/null/g, ''))) return false;
  return simpleCommands(command).every((part) => {
    if (READ_ONLY_GIT.test(part)) return true;
    const word = part.split(/\s+/)[0] ?? '';
    return READ_ONLY.has(word) && !/\s-(exec|delete|fprint)\b/.test(part);
  });
}

/** How risky running a shell command is: high when it can do lasting harm, low when it only reads, else medium. */
export function shellCommandRisk(command: string): RiskLevel {
  if (HIGH_RISK.some((pattern) => pattern.test(command))) return 'high';
  return onlyReads(command) ? 'low' : 'medium';
}
