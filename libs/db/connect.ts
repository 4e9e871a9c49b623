import postgres from 'postgres';

export type Sql = postgres.Sql<Record<string, never>>;

/**
 * Opens a connection pool; notices are dropped (migrations re-run "if not exists" statements on every start). JIT
 * compilation is off: every statement here is a short one, and a misjudged row count (a small table's guessed
 * size) made Postgres compile one for 15 ms that ran in 0.5.
 */
export function connectDatabase(url: string, options: { max?: number; applicationName?: string } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'agent-auth', jit: 'off' },
    transform: { undefined: null },
  }) as unknown as Sql;
}

/** Whether the server refused a statement (it took the statement back whole), as against a lost connection. */
export function isStatementRefused(err: unknown): boolean {
  return err instanceof postgres.PostgresError;
}
