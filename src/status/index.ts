/** The public status page: the board each instance runs, and the report's rules (src/status/rules.ts). */
export { StatusBoard } from './board.js';
export { incidentJson } from './report.js';
export type { StatusReport } from './rules.js';
