import { errors } from '@agent-auth/errors';

/** Where a page of GET /actions ended: the last request's creation time (to the microsecond) and id. */
export interface ListPosition {
  created_at: string;
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID = /^act_[0-9A-Za-z]{1,60}$/;

/** The opaque `next_cursor` of a page that ended at `position`. */
export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(`${position.created_at}|${position.id}`).toString('base64url');
}

/** The position a cursor names; a 400 naming `cursor` for anything this service did not issue. */
export function decodeListCursor(cursor: string): ListPosition {
  const [createdAt, id, extra] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (
    extra !== undefined ||
    !createdAt ||
    !id ||
    !TIMESTAMP.test(createdAt) ||
    !ID.test(id) ||
    Number.isNaN(Date.parse(createdAt))
  ) {
    throw errors.invalidCursor();
  }
  return { created_at: createdAt, id };
}
