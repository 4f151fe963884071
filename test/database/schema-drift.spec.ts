import { readFile } from 'node:fs/promises';
import prismaSchemaWasm from '@prisma/prisma-schema-wasm';
import type { DatabaseDriver } from '../../src/database/database-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../src/database/migrator.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

// The migrations are hand-written, so nothing but this test keeps them in step with prisma/schema.prisma:
// it migrates a fresh database and compares what PostgreSQL reports with what the schema's DMMF declares.
// Unsupported("...") fields are absent from the DMMF, so their columns would be reported as unmapped.

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'enum' | 'object' | 'unsupported';
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string | null;
  relationOnUpdate?: string | null;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfEnum {
  name: string;
  dbName?: string | null;
  values: Array<{ name: string; dbName: string | null }>;
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  fields: Array<{ name: string; sortOrder?: 'asc' | 'desc' }>;
}
interface Dmmf {
  datamodel: { models: DmmfModel[]; enums: DmmfEnum[]; indexes: DmmfIndex[] };
}

// One side of the comparison. Columns are keyed "table.column"; indexes, foreign keys and enums are
// compared as readable one-line descriptions.
interface SchemaShape {
  tables: Map<string, string>; // table -> what declares it ("model Tenant" or "database")
  columns: Map<string, { type: string; nullable: boolean; owner: string }>;
  indexes: Set<string>;
  foreignKeys: Set<string>;
  enums: Set<string>;
}

const parseDmmf = (prismaSchema: string): Dmmf => JSON.parse(prismaSchemaWasm.get_dmmf(JSON.stringify({ prismaSchema }))) as Dmmf;

// Prisma's PostgreSQL column types: the default for each scalar, then each @db native type.
const DEFAULT_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  DateTime: 'timestamp(3)',
  Json: 'jsonb',
  Bytes: 'bytea',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
};

function nativeType(name: string, args: string[]): string {
  const [a, b] = args;
  switch (name) {
    case 'VarChar':
      return a ? `varchar(${a})` : 'varchar';
    case 'Char':
      return `char(${a ?? 1})`;
    case 'Bit':
      return `bit(${a ?? 1})`;
    case 'VarBit':
      return a ? `varbit(${a})` : 'varbit';
    case 'Decimal':
      return a ? `numeric(${a},${b ?? 0})` : 'numeric';
    case 'Timestamp':
    case 'Timestamptz':
    case 'Time':
    case 'Timetz':
      return `${name.toLowerCase()}(${a ?? 6})`;
    case 'Integer':
      return 'integer';
    case 'SmallInt':
      return 'smallint';
    case 'DoublePrecision':
      return 'double precision';
    case 'JsonB':
      return 'jsonb';
    case 'ByteA':
      return 'bytea';
    case 'Text':
    case 'Uuid':
    case 'Xml':
    case 'Inet':
    case 'Citext':
    case 'Boolean':
    case 'BigInt':
    case 'Real':
    case 'Money':
    case 'Oid':
    case 'Date':
    case 'Json':
      return name.toLowerCase();
    default:
      // Never equal to a database type, so an unknown native type shows up as a difference.
      return `@db.${name}(${args.join(', ')}) (unknown to this test)`;
  }
}

function shapeFromDmmf(dmmf: Dmmf): SchemaShape {
  const { models, enums, indexes } = dmmf.datamodel;
  const shape: SchemaShape = { tables: new Map(), columns: new Map(), indexes: new Set(), foreignKeys: new Set(), enums: new Set() };
  const byName = new Map(models.map((m) => [m.name, m]));
  const tableOf = (model: DmmfModel) => model.dbName ?? model.name;
  const columnOf = (model: DmmfModel, field: string) => {
    const f = model.fields.find((x) => x.name === field);
    return f?.dbName ?? field;
  };
  const enumType = (name: string) => {
    const e = enums.find((x) => x.name === name);
    return `enum ${e?.dbName ?? name}`;
  };

  for (const e of enums) shape.enums.add(`enum ${e.dbName ?? e.name} (${e.values.map((v) => v.dbName ?? v.name).join(', ')})`);
  for (const model of models) {
    const table = tableOf(model);
    shape.tables.set(table, `model ${model.name}`);
    for (const field of model.fields) {
      if (field.kind === 'object') {
        if (!field.relationFromFields?.length) continue;
        const target = byName.get(field.type)!;
        // Prisma's referential action defaults: Restrict for a required relation, SetNull for an optional one.
        const onDelete = field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull');
        const onUpdate = field.relationOnUpdate ?? 'Cascade';
        shape.foreignKeys.add(
          foreignKey(
            table,
            field.relationFromFields.map((f) => columnOf(model, f)),
            tableOf(target),
            field.relationToFields!.map((f) => columnOf(target, f)),
            onDelete,
            onUpdate,
          ),
        );
        continue;
      }
      const base =
        field.kind === 'enum'
          ? enumType(field.type)
          : field.nativeType
            ? nativeType(...field.nativeType)
            : (DEFAULT_TYPES[field.type] ?? `${field.type} (unknown to this test)`);
      shape.columns.set(`${table}.${field.dbName ?? field.name}`, {
        type: field.isList ? `${base}[]` : base,
        // Prisma Migrate creates scalar lists as nullable array columns (prisma/migrate#519).
        nullable: field.isList || !field.isRequired,
        owner: `${model.name}.${field.name}`,
      });
    }
  }
  for (const index of indexes) {
    const model = byName.get(index.model)!;
    const kind = index.type === 'id' ? 'primary key' : index.type === 'unique' ? 'unique index' : 'index';
    const columns = index.fields.map((f) => `${columnOf(model, f.name)}${f.sortOrder === 'desc' ? ' DESC' : ''}`);
    shape.indexes.add(`${kind} ${tableOf(model)}(${columns.join(', ')})`);
  }
  return shape;
}

const foreignKey = (table: string, columns: string[], refTable: string, refColumns: string[], onDelete: string, onUpdate: string) =>
  `${table}(${columns.join(', ')}) -> ${refTable}(${refColumns.join(', ')}) on delete ${onDelete}, on update ${onUpdate}`;

interface ColumnRow {
  table_name: string;
  column_name: string;
  is_nullable: 'YES' | 'NO';
  data_type: string;
  udt_name: string;
  character_maximum_length: number | null;
  datetime_precision: number | null;
  numeric_precision: number | null;
  numeric_scale: number | null;
  element_data_type: string | null;
  element_udt_name: string | null;
  element_character_maximum_length: number | null;
  element_datetime_precision: number | null;
  element_numeric_precision: number | null;
  element_numeric_scale: number | null;
}

type TypeInfo = Pick<
  ColumnRow,
  'data_type' | 'udt_name' | 'character_maximum_length' | 'datetime_precision' | 'numeric_precision' | 'numeric_scale'
>;

// information_schema's description of a column, in the spelling nativeType() produces.
function sqlType(t: TypeInfo): string {
  const names: Record<string, string> = {
    int2: 'smallint',
    int4: 'integer',
    int8: 'bigint',
    float4: 'real',
    float8: 'double precision',
    bool: 'boolean',
  };
  switch (t.udt_name) {
    case 'varchar':
    case 'varbit':
      return t.character_maximum_length === null ? t.udt_name : `${t.udt_name}(${t.character_maximum_length})`;
    case 'bpchar':
      return `char(${t.character_maximum_length})`;
    case 'bit':
      return `bit(${t.character_maximum_length})`;
    case 'numeric':
      return t.numeric_precision === null ? 'numeric' : `numeric(${t.numeric_precision},${t.numeric_scale})`;
    case 'timestamp':
    case 'timestamptz':
    case 'time':
    case 'timetz':
      return `${t.udt_name}(${t.datetime_precision})`;
    default:
      if (names[t.udt_name]) return names[t.udt_name];
      return t.data_type === 'USER-DEFINED' && t.udt_name !== 'citext' ? `enum ${t.udt_name}` : t.udt_name;
  }
}

const REFERENTIAL_ACTIONS: Record<string, string> = { a: 'NoAction', r: 'Restrict', c: 'Cascade', n: 'SetNull', d: 'SetDefault' };

async function shapeFromDatabase(driver: DatabaseDriver): Promise<SchemaShape> {
  return driver.withSession(async (session) => {
    const columns = await session.query<ColumnRow>(`
      SELECT c.table_name::text, c.column_name::text, c.is_nullable::text, c.data_type::text, c.udt_name::text,
             c.character_maximum_length::int, c.datetime_precision::int, c.numeric_precision::int, c.numeric_scale::int,
             CASE WHEN e.typtype = 'e' THEN 'USER-DEFINED' ELSE e.typname::text END AS element_data_type,
             e.typname::text AS element_udt_name,
             information_schema._pg_char_max_length(e.oid, a.atttypmod)::int AS element_character_maximum_length,
             information_schema._pg_datetime_precision(e.oid, a.atttypmod)::int AS element_datetime_precision,
             information_schema._pg_numeric_precision(e.oid, a.atttypmod)::int AS element_numeric_precision,
             information_schema._pg_numeric_scale(e.oid, a.atttypmod)::int AS element_numeric_scale
        FROM information_schema.columns c
        JOIN information_schema.tables t
          ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
        JOIN pg_namespace n ON n.nspname = c.table_schema
        JOIN pg_class cl ON cl.relnamespace = n.oid AND cl.relname = c.table_name
        JOIN pg_attribute a ON a.attrelid = cl.oid AND a.attname = c.column_name
        -- information_schema.element_types leaves an array element's length and precision null;
        -- the column's typmod applies to its elements, read with information_schema's own helpers.
        LEFT JOIN pg_type arr ON arr.oid = a.atttypid AND c.data_type = 'ARRAY'
        LEFT JOIN pg_type e ON e.oid = arr.typelem
       WHERE c.table_schema = 'public' AND c.table_name <> '_prisma_migrations'
       ORDER BY c.table_name, c.ordinal_position`);
    const indexes = await session.query<{ kind: string; table_name: string; columns: string[]; predicate: string | null }>(`
      SELECT CASE WHEN ix.indisprimary THEN 'primary key' WHEN ix.indisunique THEN 'unique index' ELSE 'index' END AS kind,
             t.relname::text AS table_name,
             array_agg(coalesce(a.attname::text, '(expression)') || CASE WHEN k.option & 1 = 1 THEN ' DESC' ELSE '' END
                       ORDER BY k.ord) AS columns,
             pg_get_expr(ix.indpred, ix.indrelid) AS predicate
        FROM pg_index ix
        JOIN pg_class t ON t.oid = ix.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        CROSS JOIN LATERAL unnest(ix.indkey::int2[], ix.indoption::int2[]) WITH ORDINALITY AS k(attnum, option, ord)
        LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
       WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations' AND k.ord <= ix.indnkeyatts
       GROUP BY ix.indexrelid, ix.indisprimary, ix.indisunique, t.relname, ix.indpred, ix.indrelid`);
    const foreignKeys = await session.query<{
      table_name: string;
      columns: string[];
      ref_table: string;
      ref_columns: string[];
      on_delete: string;
      on_update: string;
    }>(`
      SELECT t.relname::text AS table_name, rt.relname::text AS ref_table,
             (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS columns,
             (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, ord)
                JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS ref_columns,
             c.confdeltype::text AS on_delete, c.confupdtype::text AS on_update
        FROM pg_constraint c
        JOIN pg_class t ON t.oid = c.conrelid
        JOIN pg_class rt ON rt.oid = c.confrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE c.contype = 'f' AND n.nspname = 'public'`);
    const enums = await session.query<{ name: string; labels: string[] }>(`
      SELECT t.typname::text AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
        FROM pg_type t
        JOIN pg_enum e ON e.enumtypid = t.oid
        JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = 'public'
       GROUP BY t.typname`);

    const shape: SchemaShape = { tables: new Map(), columns: new Map(), indexes: new Set(), foreignKeys: new Set(), enums: new Set() };
    for (const c of columns) {
      shape.tables.set(c.table_name, 'database');
      const array = c.data_type === 'ARRAY';
      const type = array
        ? `${sqlType({
            data_type: c.element_data_type!,
            udt_name: c.element_udt_name!,
            character_maximum_length: c.element_character_maximum_length,
            datetime_precision: c.element_datetime_precision,
            numeric_precision: c.element_numeric_precision,
            numeric_scale: c.element_numeric_scale,
          })}[]`
        : sqlType(c);
      shape.columns.set(`${c.table_name}.${c.column_name}`, { type, nullable: c.is_nullable === 'YES', owner: 'database' });
    }
    for (const i of indexes) {
      shape.indexes.add(`${i.kind} ${i.table_name}(${i.columns.join(', ')})${i.predicate ? ` WHERE ${i.predicate}` : ''}`);
    }
    for (const f of foreignKeys) {
      shape.foreignKeys.add(
        foreignKey(f.table_name, f.columns, f.ref_table, f.ref_columns, REFERENTIAL_ACTIONS[f.on_delete], REFERENTIAL_ACTIONS[f.on_update]),
      );
    }
    for (const e of enums) shape.enums.add(`enum ${e.name} (${e.labels.join(', ')})`);
    return shape;
  });
}

const describeColumn = (c: { type: string; nullable: boolean }) => `${c.type} ${c.nullable ? 'NULL' : 'NOT NULL'}`;

// Every difference, one line each, schema first: an empty list means the two agree.
function diffShapes(schema: SchemaShape, database: SchemaShape): string[] {
  const diffs: string[] = [];
  for (const [table, owner] of schema.tables) {
    if (!database.tables.has(table)) diffs.push(`table ${table} (${owner}) is missing from the database`);
  }
  for (const table of database.tables.keys()) {
    if (!schema.tables.has(table)) diffs.push(`table ${table} is in the database but no model maps to it`);
  }
  for (const [key, expected] of schema.columns) {
    const table = key.split('.')[0];
    if (!database.tables.has(table)) continue;
    const actual = database.columns.get(key);
    if (!actual) diffs.push(`${expected.owner} -> ${key}: column is missing from the database (schema: ${describeColumn(expected)})`);
    else if (expected.type !== actual.type || expected.nullable !== actual.nullable) {
      diffs.push(`${expected.owner} -> ${key}: schema says ${describeColumn(expected)}, database has ${describeColumn(actual)}`);
    }
  }
  for (const [key, actual] of database.columns) {
    const table = key.split('.')[0];
    if (schema.tables.has(table) && !schema.columns.has(key)) {
      diffs.push(`${key}: column (${describeColumn(actual)}) is in the database but no field of ${schema.tables.get(table)} maps to it`);
    }
  }
  for (const [what, expected, actual] of [
    ['', schema.indexes, database.indexes],
    ['foreign key ', schema.foreignKeys, database.foreignKeys],
    ['', schema.enums, database.enums],
  ] as const) {
    for (const item of expected) if (!actual.has(item)) diffs.push(`${what}${item}: declared in the schema, missing from the database`);
    for (const item of actual) if (!expected.has(item)) diffs.push(`${what}${item}: in the database, not declared in the schema`);
  }
  return diffs;
}

function assertNoDrift(diffs: string[]): void {
  if (diffs.length > 0) {
    const count = `${diffs.length} difference${diffs.length > 1 ? 's' : ''}`;
    throw new Error(
      `prisma/schema.prisma and prisma/migrations disagree (${count}):\n${diffs.map((d) => `  - ${d}`).join('\n')}\n` +
        'Write a migration for the schema change (or fix the schema), then run this test again.',
    );
  }
}

const SCHEMA_PATH = new URL('../../prisma/schema.prisma', import.meta.url);

// Replaces text in the schema, failing loudly when the text is not there (a stale edit must not pass quietly).
function edit(schema: string, from: string | RegExp, to: string): string {
  const edited = schema.replace(from, to);
  if (edited === schema) throw new Error(`the schema no longer contains ${String(from)}; update this test`);
  return edited;
}

describe('schema drift between prisma/schema.prisma and prisma/migrations', () => {
  let database: TestDatabase;
  let schemaText: string;
  let migrated: SchemaShape;

  beforeAll(async () => {
    schemaText = await readFile(SCHEMA_PATH, 'utf8');
    database = await createTestDatabase({ migrated: false });
    await database.driver.withSession(async (session) => migrate(session, await readMigrations(MIGRATIONS_DIR)));
    migrated = await shapeFromDatabase(database.driver);
  });

  afterAll(() => database.close());

  it('the migrated database has exactly the tables, columns, indexes and foreign keys the schema declares', () => {
    const schema = shapeFromDmmf(parseDmmf(schemaText));
    expect(schema.columns.size).toBeGreaterThan(0);

    assertNoDrift(diffShapes(schema, migrated));
  });

  describe('the comparison', () => {
    const driftAfter = (from: string | RegExp, to: string) => diffShapes(shapeFromDmmf(parseDmmf(edit(schemaText, from, to))), migrated);

    it.each<[string, string | RegExp, string, RegExp[]]>([
      [
        'a field the migrations never created',
        'name      String    @unique',
        'name      String    @unique\n  nickname  String?',
        [/^Tenant\.nickname -> tenants\.nickname: column is missing from the database \(schema: text NULL\)$/],
      ],
      [
        'a column no field maps to',
        /\n\s+revokedAt .*\n/,
        '\n',
        [/^api_keys\.revoked_at: column \(timestamptz\(3\) NULL\) is in the database but no field of model ApiKey maps to it$/],
      ],
      [
        'a nullability mismatch',
        'workspacePath String?',
        'workspacePath String',
        [/^Project\.workspacePath -> projects\.workspace_path: schema says text NOT NULL, database has text NULL$/],
      ],
      [
        'a type mismatch (native type and timestamp precision)',
        'createdAt DateTime  @default(now()) @map("created_at") @db.Timestamptz(3)\n  updatedAt',
        'createdAt DateTime  @default(now()) @map("created_at") @db.Timestamptz(6)\n  updatedAt',
        [/^Tenant\.createdAt -> tenants\.created_at: schema says timestamptz\(6\) NOT NULL, database has timestamptz\(3\) NOT NULL$/],
      ],
      [
        'DateTime without @db.Timestamptz (Prisma makes it timestamp(3) without time zone)',
        'lastUsedAt DateTime? @map("last_used_at") @db.Timestamptz(3)',
        'lastUsedAt DateTime? @map("last_used_at")',
        [/^ApiKey\.lastUsedAt -> api_keys\.last_used_at: schema says timestamp\(3\) NULL, database has timestamptz\(3\) NULL$/],
      ],
      [
        'a changed @map',
        '@map("workspace_path")',
        '@map("workspace_dir")',
        [
          /^Project\.workspacePath -> projects\.workspace_dir: column is missing/,
          /^projects\.workspace_path: column .* no field of model Project/,
        ],
      ],
      [
        'an index the migrations never created',
        '@@map("tenants")',
        '@@index([createdAt])\n  @@map("tenants")',
        [/^index tenants\(created_at\): declared in the schema, missing from the database$/],
      ],
      [
        'an index the schema does not declare',
        /\n\s+@@index\(\[tenantId\]\)\n/,
        '\n',
        [/^index api_keys\(tenant_id\): in the database, not declared in the schema$/],
      ],
      [
        'a unique index with its columns in another order',
        '@@unique([tenantId, slug])',
        '@@unique([slug, tenantId])',
        [/^unique index projects\(slug, tenant_id\): declared in the schema/, /^unique index projects\(tenant_id, slug\): in the database/],
      ],
      [
        'a unique field that is only indexed in the database',
        'prefix     String    @unique',
        'prefix     String',
        [/^unique index api_keys\(prefix\): in the database, not declared in the schema$/],
      ],
      [
        'a foreign key with another referential action',
        /(model ApiKey[\s\S]*?)onDelete: Cascade/,
        '$1onDelete: Restrict',
        [
          /^foreign key api_keys\(tenant_id\) -> tenants\(id\) on delete Restrict, on update Cascade: declared in the schema, missing/,
          /^foreign key api_keys\(tenant_id\) -> tenants\(id\) on delete Cascade, on update Cascade: in the database, not declared/,
        ],
      ],
      [
        'an enum the migrations never created',
        'model Tenant {',
        'enum TenantPlan {\n  FREE\n  PAID\n}\n\nmodel Tenant {\n  plan TenantPlan @default(FREE)',
        [
          /^Tenant\.plan -> tenants\.plan: column is missing from the database \(schema: enum TenantPlan NOT NULL\)$/,
          /^enum TenantPlan \(FREE, PAID\): declared in the schema/,
        ],
      ],
    ])('names %s', (_what, from, to, expected) => {
      const diffs = driftAfter(from, to);

      for (const pattern of expected) expect(diffs).toContainEqual(expect.stringMatching(pattern));
      expect(diffs).toHaveLength(expected.length);
    });

    it('names a changed @@map as a missing table and a table no model maps to', () => {
      const diffs = driftAfter('@@map("projects")', '@@map("project")');

      expect(diffs).toContain('table project (model Project) is missing from the database');
      expect(diffs).toContain('table projects is in the database but no model maps to it');
      // The columns of a missing table are not listed one by one; its indexes and foreign keys are.
      expect(diffs.filter((d) => /^(Project\.|projects\.)/.test(d))).toEqual([]);
    });

    it('reports every difference in one message', () => {
      const nullable = edit(schemaText, 'workspacePath String?', 'workspacePath String');
      const edited = edit(nullable, '@@map("tenants")', '@@index([createdAt])\n  @@map("tenants")');
      const diffs = diffShapes(shapeFromDmmf(parseDmmf(edited)), migrated);

      expect(() => assertNoDrift(diffs)).toThrow(
        /disagree \(2 differences\):\n {2}- .*projects\.workspace_path.*\n {2}- index tenants\(created_at\)/,
      );
    });

    it('maps every Prisma scalar type, enum and list the way Prisma Migrate creates them', async () => {
      // The SQL `prisma migrate diff` writes for the model below.
      const sql = `
        CREATE TYPE "Role" AS ENUM ('ADMIN', 'member');
        CREATE TYPE "sample_status" AS ENUM ('ON', 'OFF');
        CREATE TABLE "Owner" ("id" INTEGER NOT NULL, CONSTRAINT "Owner_pkey" PRIMARY KEY ("id"));
        CREATE TABLE "samples" (
          "id" SERIAL NOT NULL,
          "big" BIGINT NOT NULL,
          "flag" BOOLEAN NOT NULL,
          "ratio" DOUBLE PRECISION NOT NULL,
          "amount" DECIMAL(65,30) NOT NULL,
          "price" DECIMAL(10,2),
          "at" TIMESTAMP(3) NOT NULL,
          "at_tz" TIMESTAMPTZ(6),
          "day" DATE,
          "doc" JSONB NOT NULL,
          "raw_doc" JSON,
          "blob" BYTEA,
          "code" VARCHAR(12) NOT NULL,
          "country" CHAR(2),
          "small" SMALLINT,
          "real" REAL,
          "ref" UUID,
          "role" "Role" NOT NULL DEFAULT 'member',
          "status" "sample_status",
          "roles" "Role"[],
          "tags" TEXT[],
          "codes" VARCHAR(5)[],
          "owner_id" INTEGER,
          CONSTRAINT "samples_pkey" PRIMARY KEY ("id")
        );
        CREATE UNIQUE INDEX "samples_code_key" ON "samples"("code");
        CREATE INDEX "samples_at_idx" ON "samples"("at" DESC, "id");
        ALTER TABLE "samples" ADD CONSTRAINT "samples_owner_id_fkey" FOREIGN KEY ("owner_id")
          REFERENCES "Owner"("id") ON DELETE SET NULL ON UPDATE CASCADE;`;
      const schema = `
        datasource db {
          provider = "postgresql"
        }
        enum Role {
          ADMIN
          MEMBER @map("member")
        }
        enum Status {
          ON
          OFF
          @@map("sample_status")
        }
        model Owner {
          id      Int      @id
          samples Sample[]
        }
        model Sample {
          id      Int       @id @default(autoincrement())
          big     BigInt
          flag    Boolean
          ratio   Float
          amount  Decimal
          price   Decimal?  @db.Decimal(10, 2)
          at      DateTime
          atTz    DateTime? @map("at_tz") @db.Timestamptz(6)
          day     DateTime? @db.Date
          doc     Json
          rawDoc  Json?     @map("raw_doc") @db.Json
          blob    Bytes?
          code    String    @unique @db.VarChar(12)
          country String?   @db.Char(2)
          small   Int?      @db.SmallInt
          real    Float?    @db.Real
          ref     String?   @db.Uuid
          role    Role      @default(MEMBER)
          status  Status?
          roles   Role[]
          tags    String[]
          codes   String[]  @db.VarChar(5)
          ownerId Int?      @map("owner_id")
          owner   Owner?    @relation(fields: [ownerId], references: [id])
          @@index([at(sort: Desc), id])
          @@map("samples")
        }`;
      const scratch = await createTestDatabase({ migrated: false });
      try {
        await scratch.driver.withSession((s) => s.exec(sql));

        expect(diffShapes(shapeFromDmmf(parseDmmf(schema)), await shapeFromDatabase(scratch.driver))).toEqual([]);
      } finally {
        await scratch.close();
      }
    });
  });
});
