ALTER TABLE `vector_tables` ADD `feed_resync_reason` text;--> statement-breakpoint
ALTER TABLE `vector_tables` ADD `sync_message` text;--> statement-breakpoint
ALTER TABLE `vector_tables` ADD `sync_message_at` text;