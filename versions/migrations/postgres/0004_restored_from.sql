-- The version a restore wrote its content from, so that history says where
-- a restored memory came back from (a deleted one returns as a new memory).
ALTER TABLE versions ADD COLUMN restored_from TEXT;
