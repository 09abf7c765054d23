import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadResult } from './load.js';

/** One measured run of one side of a comparison. */
export interface Sample {
  rps: number;
  p50Ms?: number;
  p99Ms?: number;
  p999Ms?: number;
  /**
   * This process's CPU time per operation (µs), where the operation runs in it (the storage
   * layer, its driver): its own cost, which a database server sharing the cores does not move as
   * it moves throughput.
   */
  cpuUsPerOp?: number;
}

export interface Comparison {
  scenario: string;
  service: Sample;
  baseline: Sample;
  baselineName: string;
  /** service / baseline throughput: the median of the rounds' ratios (each round runs both sides back to back). */
  ratio: number;
  /** The lowest and highest of the rounds' ratios: how far one round can be trusted. */
  ratioSpread?: [number, number];
  target?: { minRatio?: number; maxP99Ratio?: number };
  met?: boolean;
  note?: string;
  /** The same request at other numbers of connections (one run each side). */
  sweep?: { connections: number; service: Sample; baseline: Sample }[];
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The first and third quartiles: how widely samples spread around their median. */
export function quartiles(xs: number[]): [number, number] {
  const s = [...xs].sort((a, b) => a - b);
  return [s[Math.floor((s.length - 1) / 4)] ?? NaN, s[Math.ceil((3 * (s.length - 1)) / 4)] ?? NaN];
}

/** Each figure the median of the samples' (taken on its own). */
export function medianSample(samples: Sample[]): Sample {
  const pick = (f: (s: Sample) => number | undefined) => {
    const xs = samples.map(f).filter((x): x is number => x !== undefined);
    return xs.length ? median(xs) : undefined;
  };
  return { rps: pick((s) => s.rps)!, p50Ms: pick((s) => s.p50Ms), p99Ms: pick((s) => s.p99Ms), p999Ms: pick((s) => s.p999Ms), cpuUsPerOp: pick((s) => s.cpuUsPerOp) };
}

/** Runs service and baseline alternately for several rounds and compares their medians. */
export async function compare(
  scenario: string,
  rounds: number,
  service: () => Promise<Sample>,
  baselineName: string,
  baseline: () => Promise<Sample>,
  target?: Comparison['target'],
): Promise<Comparison> {
  const a: Sample[] = [];
  const b: Sample[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate which side goes first so drift on a shared machine hits both alike.
    if (i % 2 === 0) {
      a.push(await service());
      b.push(await baseline());
    } else {
      b.push(await baseline());
      a.push(await service());
    }
  }
  const s = medianSample(a);
  const base = medianSample(b);
  // Ratios of the pairs measured next to each other, not of two medians taken at different moments.
  const ratios = a.map((x, i) => x.rps / b[i]!.rps);
  const ratio = median(ratios);
  const ratioSpread: [number, number] = [Math.min(...ratios), Math.max(...ratios)];
  let met: boolean | undefined;
  if (target) {
    met = (target.minRatio === undefined || ratio >= target.minRatio) &&
      (target.maxP99Ratio === undefined || (s.p99Ms !== undefined && base.p99Ms !== undefined && s.p99Ms <= target.maxP99Ratio * base.p99Ms));
  }
  return { scenario, service: s, baseline: base, baselineName, ratio, ratioSpread, target, met };
}

/** Runs async operations with a fixed number in flight for `seconds`; returns ops/s. */
export async function throughput(seconds: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<Sample> {
  let count = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  const cpu = process.cpuUsage();
  const worker = async () => {
    while (performance.now() < end) await op(count++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(cpu);
  return { rps: count / ((performance.now() - start) / 1000), cpuUsPerOp: (used.user + used.system) / count };
}

const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return os.cpus().length > 1;
  } catch {
    return false;
  }
})();

/** Spawns a process pinned to core 0 (the load generator gets core 1), or on every core. */
export function spawnPinned(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, pinned = true): ChildProcess {
  const [c, a] = hasTaskset && pinned ? ['taskset', ['-c', '0', cmd, ...args]] : [cmd, args];
  return spawn(c, a, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

export function waitForLine(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = pattern.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(m);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before ready: ${out.slice(-500)}`)));
  });
}

export interface LoadRequest {
  url: string;
  /** Paths sent in turn (see LoadSpec). */
  paths?: string[];
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

const LOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'load.js');

/**
 * One measured run of the load generator (bench/load.ts: keep-alive connections, 50 unless
 * told, opened and warmed for a second before measuring), pinned to core 1 when possible.
 */
export function load(r: LoadRequest, seconds: number, connections = 50, pinned = true, warmupSeconds = 1): Promise<Sample> {
  // The spec goes in on stdin: thousands of paths are more than a command line holds.
  const spec = JSON.stringify({ ...r, connections, seconds, warmupSeconds });
  const [cmd, a] = hasTaskset && pinned ? ['taskset', ['-c', '1', process.execPath, LOAD, '-']] : [process.execPath, [LOAD, '-']];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, a, { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.end(spec);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator failed (${code}): ${out}`));
      const result = JSON.parse(out) as LoadResult;
      if (result.errors > 0) return reject(new Error(`${result.errors} failed requests to ${r.url} (first: ${result.firstError})`));
      resolve({ rps: result.rps, p50Ms: result.p50Ms, p99Ms: result.p99Ms, p999Ms: result.p999Ms });
    });
  });
}

export function rssMb(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
