export { connectDatabase, isStatementRefused, type Sql } from './connect.js';
export { migrate, packageDir } from './migrate.js';
export { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.js';
export { gatherWrites, type WriteGathering } from './write-gatherer.js';
export { vacuumAfterDeletes, type VacuumSchedule } from './vacuum-schedule.js';
