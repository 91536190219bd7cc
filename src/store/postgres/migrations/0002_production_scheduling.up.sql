-- Production scheduling (seed 000). Business data (source_orders) and processing state
-- (schedule_items) are different facts in different tables.
CREATE TABLE source_orders (
  site_code  text NOT NULL,
  order_no   text NOT NULL,
  lot_no     text NOT NULL,
  quantity   bigint NOT NULL CHECK (quantity > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_code, order_no, lot_no)
);

CREATE TABLE schedule_runs (
  run_id       bigserial PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('batch', 'manual', 'legacy')),
  status       text NOT NULL CHECK (status IN ('creating', 'running', 'done', 'error')),
  owner        text NOT NULL,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  error        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX schedule_runs_live ON schedule_runs (status) WHERE status IN ('creating', 'running');

CREATE TABLE schedule_items (
  item_id     bigserial PRIMARY KEY,
  run_id      bigint NOT NULL REFERENCES schedule_runs (run_id),
  site_code   text NOT NULL,
  order_no    text NOT NULL,
  lot_no      text NOT NULL,
  status      text NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  attempt     integer NOT NULL DEFAULT 0,
  owner       text,
  lease_until timestamptz,
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (site_code, order_no, lot_no) REFERENCES source_orders (site_code, order_no, lot_no)
);
CREATE INDEX schedule_items_by_key ON schedule_items (site_code, order_no, lot_no, status);
CREATE INDEX schedule_items_by_run ON schedule_items (run_id, status);
CREATE INDEX schedule_items_processing ON schedule_items (lease_until) WHERE status = 'processing';

CREATE TABLE production_orders (
  site_code       text NOT NULL,
  order_no        text NOT NULL,
  lot_no          text NOT NULL,
  item_id         bigint NOT NULL UNIQUE REFERENCES schedule_items (item_id),
  quantity        bigint NOT NULL,
  document_scope  text NOT NULL,
  document_value  bigint NOT NULL,
  document_number text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_code, order_no, lot_no),
  FOREIGN KEY (document_scope, document_value) REFERENCES documents (scope, value)
);

-- Legacy items wait here until `onceorder legacy dedup --apply` moves them.
CREATE TABLE legacy_items (
  legacy_id  bigserial PRIMARY KEY,
  line_no    integer NOT NULL,
  site_code  text NOT NULL,
  order_no   text NOT NULL,
  lot_no     text NOT NULL,
  status     text NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  created_at timestamptz NOT NULL,
  run_id     text,
  moved_at   timestamptz,
  item_id    bigint
);
