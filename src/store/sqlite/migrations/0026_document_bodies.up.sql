-- A document's body, stored in its number's transaction (seed 003; docs/API.md, "Document
-- numbers"). The header is a column of the document; each line a row of document_lines, so that a
-- number and its detail rows commit together or not at all. Both hold the API's canonical JSON text
-- (members sorted, no spaces), which a replay compares byte for byte.
ALTER TABLE documents ADD COLUMN header TEXT;
CREATE TABLE document_lines (
  scope   TEXT NOT NULL,
  value   INTEGER NOT NULL,
  line_no INTEGER NOT NULL CHECK (line_no BETWEEN 1 AND 500),
  data    TEXT NOT NULL,
  PRIMARY KEY (scope, value, line_no),
  FOREIGN KEY (scope, value) REFERENCES documents (scope, value)
) STRICT;
