ALTER TABLE `tasks` ADD `stalled_runs` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `vector_tables` ADD `served_config_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
UPDATE `vector_tables` SET `served_config_version` = CASE WHEN `sync_status` = 'pending_rebackfill' THEN `config_version` - 1 ELSE `config_version` END;
