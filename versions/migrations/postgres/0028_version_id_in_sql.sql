-- memfs_version_id in plain SQL: the ULID's 26 characters are read
-- straight off the creation millisecond and the row number (the 2 zero
-- bits and 48 bits of the millisecond make the first 10; the tag 0x5e90
-- the next 3, "BT8", and a bit of the 14th; the row number's 64 bits the
-- rest), in one expression PostgreSQL inlines where it is called, rather
-- than a plpgsql loop over 130 bits run for every save by the trigger
-- that moves a memory's head. Same results: versionID in ids.go.

CREATE FUNCTION memfs_version_id_of_ms(seq BIGINT, ms BIGINT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT 'memver_'
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ms >> 45)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 40) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 35) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 30) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 25) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 20) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 15) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 10) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> 5) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ms & 31)::int + 1, 1)
	|| 'BT8'
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 60) & 15)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 55) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 50) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 45) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 40) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 35) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 30) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 25) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 20) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 15) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 10) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((seq >> 5) & 31)::int + 1, 1)
	|| substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (seq & 31)::int + 1, 1)
$$;

CREATE OR REPLACE FUNCTION memfs_version_id(seq BIGINT, nanos BIGINT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT memfs_version_id_of_ms(seq, CASE WHEN nanos / 1000000 < 0 THEN 281474976710655 ELSE nanos / 1000000 END)
$$;
