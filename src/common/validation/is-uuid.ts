// Lower case only, as the service writes every id: PostgreSQL would match an upper-case spelling of an id
// too, and an id is also a name (WORKSPACE_ROOT/<projectId>, cache keys), so a second spelling would be a
// second directory. Another spelling is answered like a missing id.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Ids that cannot exist are answered like missing ones (404), never sent to the database as a bad uuid.
export const isUuid = (value: string): boolean => UUID.test(value);
