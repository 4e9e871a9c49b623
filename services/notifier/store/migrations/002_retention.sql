-- Finished deliveries are kept for WEBHOOK_RETENTION_DAYS, then pruned with their attempts; the request's audit
-- trail in the actions schema keeps every attempt for good.
create index if not exists deliveries_finished_idx on notifier.deliveries (finished_at) where state <> 'pending';
