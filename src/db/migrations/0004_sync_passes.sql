CREATE TABLE `sync_passes` (
	`id` text PRIMARY KEY NOT NULL,
	`vector_table_id` text NOT NULL,
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`rows_scanned` integer DEFAULT 0 NOT NULL,
	`rows_embedded` integer DEFAULT 0 NOT NULL,
	`rows_metadata_only` integer DEFAULT 0 NOT NULL,
	`rows_deleted` integer DEFAULT 0 NOT NULL,
	`rows_unchanged` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `sync_passes_table_started_idx` ON `sync_passes` (`vector_table_id`,`started_at`,`id`);--> statement-breakpoint
CREATE INDEX `sync_passes_org_idx` ON `sync_passes` (`org_id`);