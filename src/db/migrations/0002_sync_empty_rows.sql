CREATE TABLE `sync_empty_rows` (
	`vector_table_id` text NOT NULL,
	`generation` integer NOT NULL,
	`pk` text NOT NULL,
	`text_hash` text NOT NULL,
	PRIMARY KEY(`vector_table_id`, `generation`, `pk`)
);
