CREATE TABLE `embedding_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`environment_id` text NOT NULL,
	`name` text NOT NULL,
	`provider` text NOT NULL,
	`api_key_sealed` text,
	`default_model` text,
	`base_url` text,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `embedding_providers_org_name_idx` ON `embedding_providers` (`org_id`,`name`);--> statement-breakpoint
CREATE INDEX `embedding_providers_org_env_idx` ON `embedding_providers` (`org_id`,`environment_id`);