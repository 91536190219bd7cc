-- Document numbers (seed 003): one counter row per scope, taken and used in the
-- transaction that inserts the document; (scope, value) unique as the backstop.
CREATE FUNCTION oo_format_number(v bigint, radix int, width int) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  digits constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  out text := '';
  n bigint := v;
BEGIN
  IF radix = 10 THEN RETURN lpad(v::text, greatest(width, length(v::text)), '0'); END IF;
  LOOP
    out := substr(digits, (n % radix)::int + 1, 1) || out;
    n := n / radix;
    EXIT WHEN n = 0;
  END LOOP;
  RETURN lpad(out, greatest(width, length(out)), '0');
END $$;

CREATE TABLE doc_scopes (
  scope      text PRIMARY KEY CHECK (scope ~ '^[A-Za-z0-9._-]{1,64}$'),
  width      integer NOT NULL DEFAULT 4 CHECK (width BETWEEN 1 AND 18),
  radix      integer NOT NULL DEFAULT 10 CHECK (radix BETWEEN 2 AND 36),
  max_value  bigint NOT NULL DEFAULT 9999 CHECK (max_value >= 1),
  last_value bigint NOT NULL DEFAULT 0 CHECK (last_value >= 0 AND last_value <= max_value),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE documents (
  scope      text NOT NULL REFERENCES doc_scopes (scope),
  value      bigint NOT NULL CHECK (value >= 1),
  number     text NOT NULL,
  origin     text NOT NULL CHECK (origin IN ('issued', 'legacy')),
  scheme     text NOT NULL,
  title      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, value)
);

CREATE TABLE document_receipts (
  scope           text NOT NULL,
  idempotency_key text NOT NULL,
  title           text NOT NULL,
  value           bigint NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, idempotency_key),
  FOREIGN KEY (scope, value) REFERENCES documents (scope, value)
);
