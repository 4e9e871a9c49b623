// The capacity model of docs/capacity.md ("10,000 creates per second"), computed from the CPU per create the
// `create` case measured for each process over NATS, so the document's table is what a run of the bench prints.

/** What each pod of a service asks for (deploy/kubernetes/overlays/production) and how busy its autoscaler keeps it. */
export const POD_VCPU = 1;
export const TARGET_UTILIZATION = 0.7;
/** Every service runs at least two replicas (the autoscalers' minimum), so one can go while the other serves. */
export const MIN_REPLICAS = 2;

export interface ProcessCapacity {
  name: string;
  /** Cores busy at the rate. */
  cores: number;
  /** Replicas of POD_VCPU at TARGET_UTILIZATION (at least MIN_REPLICAS); none for nats-server and Postgres. */
  replicas?: number;
}

/** The cores and replicas each process needs at `rate` creates a second, from its CPU milliseconds per create. */
export function capacityAt(rate: number, cpuMsPerCreate: Map<string, number>): ProcessCapacity[] {
  return [...cpuMsPerCreate].map(([name, ms]) => {
    const cores = (ms * rate) / 1000;
    if (name === 'nats-server' || name.startsWith('postgres')) return { name, cores };
    return { name, cores, replicas: Math.max(MIN_REPLICAS, Math.ceil(cores / (POD_VCPU * TARGET_UTILIZATION))) };
  });
}

/** One line: each process's cores and replicas at the rate. */
export function describeCapacity(rate: number, model: ProcessCapacity[]): string {
  const parts = model.map(
    (p) => `${p.name} ${p.cores.toFixed(1)} cores${p.replicas ? ` → ${p.replicas} replicas` : ''}`,
  );
  return `at ${rate.toLocaleString('en')} creates/s (pods of ${POD_VCPU} vCPU at ${TARGET_UTILIZATION * 100} %): ${parts.join(', ')}`;
}
