/**
 * Column types and column groups the table interfaces share (a kysely ColumnType is select type, insert
 * type, update type).
 */
import type { ColumnType } from 'kysely';

/** A column the database fills when an insert leaves it out. */
export type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** A nullable column an insert may leave out (it is null then). */
export type OptionalNull<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** The call an agent action is: its id, its tenant, the agent, the tool and method, the session. */
export interface ActionCallColumns {
  action_id: string;
  tenant_id: string;
  agent_id: string;
  agent_type: string;
  agent_version: string;
  tool: string;
  method: string;
  session_id: string | null;
}
