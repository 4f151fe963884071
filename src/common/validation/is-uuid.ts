const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Ids that cannot exist are answered like missing ones (404), never sent to the database as a bad uuid.
export const isUuid = (value: string): boolean => UUID.test(value);
