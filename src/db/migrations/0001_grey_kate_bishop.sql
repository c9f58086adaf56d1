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
CREATE INDEX `connections_org_env_idx` ON `connections` (`org_id`,`environment_id`);