-- The credential guard's policy per store: what a write that holds a
-- credential does ('refuse' it, save it and 'warn', or 'off': no check).
-- Existing stores take the default, 'refuse'.
ALTER TABLE stores ADD COLUMN guard TEXT NOT NULL DEFAULT 'refuse';
