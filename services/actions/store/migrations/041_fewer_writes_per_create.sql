-- Fewer writes per create (docs/capacity.md "Indexes on the request path").
--
-- A request's audit events are read by request_id through audit_request_seq_idx (request_id, seq) (the request's
-- trail, and the check that a webhook attempt is recorded once): this older index was one more entry per event
-- written and per event sealed, read by no query.
drop index if exists actions.audit_request_idx;
-- The relay deletes a row once the stream holds its event, instead of marking it published and purging it an hour
-- later: a delete adds no row version and no index entry, where the mark wrote a whole new version of the row and
-- an entry in each index. Rows published before this change go now.
drop index if exists actions.outbox_published_idx;
delete from actions.outbox where published_at is not null;
