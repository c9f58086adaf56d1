ALTER TABLE `sync_empty_rows` ADD `error` text;--> statement-breakpoint
ALTER TABLE `sync_empty_rows` ADD `attempts` integer;--> statement-breakpoint
ALTER TABLE `sync_empty_rows` ADD `first_seen_at` text;--> statement-breakpoint
ALTER TABLE `sync_empty_rows` ADD `last_seen_at` text;