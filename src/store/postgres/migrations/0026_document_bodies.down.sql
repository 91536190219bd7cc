DROP TABLE document_lines;
ALTER TABLE documents DROP COLUMN header;
