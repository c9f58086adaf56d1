CREATE TABLE `service_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `auth_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE INDEX `auth_sessions_user_idx` ON `auth_sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `otp_codes` (
	`email` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rate_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rate_events_key_at_idx` ON `rate_events` (`key`,`at`);--> statement-breakpoint
CREATE TABLE `refresh_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`rotated_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `refresh_tokens_token_hash_unique` ON `refresh_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_session_idx` ON `refresh_tokens` (`session_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`invited_by` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`accepted_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token_hash_unique` ON `invitations` (`token_hash`);--> statement-breakpoint
CREATE INDEX `invitations_org_idx` ON `invitations` (`org_id`,`email`);--> statement-breakpoint
CREATE TABLE `members` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `members_org_user_idx` ON `members` (`org_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `members_user_idx` ON `members` (`user_id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`tier` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_name_unique` ON `organizations` (`name`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`key_prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`permission` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_org_idx` ON `api_keys` (`org_id`,`created_by`);--> statement-breakpoint
CREATE TABLE `environments` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `environments_org_name_idx` ON `environments` (`org_id`,`name`);--> statement-breakpoint
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
CREATE INDEX `embedding_providers_org_env_idx` ON `embedding_providers` (`org_id`,`environment_id`);--> statement-breakpoint
CREATE TABLE `connections` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`environment_id` text NOT NULL,
	`name` text NOT NULL,
	`provider` text NOT NULL,
	`mode` text NOT NULL,
	`status` text NOT NULL,
	`credentials` text NOT NULL,
	`last_tested_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `connections_org_name_idx` ON `connections` (`org_id`,`name`);--> statement-breakpoint
CREATE INDEX `connections_org_env_idx` ON `connections` (`org_id`,`environment_id`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`task_type` text NOT NULL,
	`target_id` text NOT NULL,
	`status` text NOT NULL,
	`priority` integer NOT NULL,
	`payload` text NOT NULL,
	`progress` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`last_error` text,
	`run_after` text NOT NULL,
	`locked_by` text,
	`locked_until` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`finished_at` text,
	`exclusive_key` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_exclusive_active_idx` ON `tasks` (`exclusive_key`) WHERE status IN ('pending', 'running') AND exclusive_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_claim_idx` ON `tasks` (`status`,`priority`,`created_at`);--> statement-breakpoint
CREATE INDEX `tasks_org_idx` ON `tasks` (`org_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `tasks_target_idx` ON `tasks` (`target_id`,`status`);--> statement-breakpoint
CREATE TABLE `vector_tables` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`environment_id` text NOT NULL,
	`connection_id` text NOT NULL,
	`embedding_provider_id` text,
	`name` text NOT NULL,
	`source_table` text NOT NULL,
	`primary_key_column` text NOT NULL,
	`columns` text NOT NULL,
	`embedding_model` text NOT NULL,
	`embedding_dimensions` integer NOT NULL,
	`mode` text NOT NULL,
	`sync_mode` text NOT NULL,
	`sync_status` text NOT NULL,
	`vectorstore_collection` text NOT NULL,
	`platform_vector_ref` text,
	`numeric_pk` integer NOT NULL,
	`config_version` integer DEFAULT 1 NOT NULL,
	`serving_model` text,
	`serving_dimensions` integer,
	`total_rows` integer DEFAULT 0 NOT NULL,
	`synced_rows` integer DEFAULT 0 NOT NULL,
	`rows_pending` integer DEFAULT 0 NOT NULL,
	`last_sync_started_at` text,
	`last_sync_at` text,
	`oldest_pending_change_at` text,
	`cdc_checkpoint` text,
	`last_error` text,
	`last_error_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `vector_tables_org_name_idx` ON `vector_tables` (`org_id`,`name`);--> statement-breakpoint
CREATE INDEX `vector_tables_org_env_idx` ON `vector_tables` (`org_id`,`environment_id`);--> statement-breakpoint
CREATE INDEX `vector_tables_connection_idx` ON `vector_tables` (`connection_id`);--> statement-breakpoint
CREATE INDEX `vector_tables_provider_idx` ON `vector_tables` (`embedding_provider_id`);