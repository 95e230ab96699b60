package storetest

// SchemaV1 is the DDL of the tables sessfix reads and writes in an OpenCode
// 1.2–1.18 database, modelled on what OpenCode 1.18.33 creates: project,
// session, message, part (with their foreign keys and indexes) plus the
// tables OpenCode keeps next to them. The event and session_message tables
// are reduced to plausible columns: sessfix never reads them.
const SchemaV1 = "CREATE TABLE `project` (\n" +
	"\t`id` text PRIMARY KEY,\n" +
	"\t`worktree` text NOT NULL,\n" +
	"\t`vcs` text,\n" +
	"\t`name` text,\n" +
	"\t`icon_url` text,\n" +
	"\t`icon_color` text,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\t`time_initialized` integer,\n" +
	"\t`sandboxes` text NOT NULL\n" +
	");\n" +
	"CREATE TABLE `session` (\n" +
	"\t`id` text PRIMARY KEY,\n" +
	"\t`project_id` text NOT NULL,\n" +
	"\t`parent_id` text,\n" +
	"\t`slug` text NOT NULL,\n" +
	"\t`directory` text NOT NULL,\n" +
	"\t`title` text NOT NULL,\n" +
	"\t`version` text NOT NULL,\n" +
	"\t`share_url` text,\n" +
	"\t`summary_additions` integer,\n" +
	"\t`summary_deletions` integer,\n" +
	"\t`summary_files` integer,\n" +
	"\t`summary_diffs` text,\n" +
	"\t`revert` text,\n" +
	"\t`permission` text,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\t`time_compacting` integer,\n" +
	"\t`time_archived` integer,\n" +
	"\tCONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE\n" +
	");\n" +
	"CREATE TABLE `message` (\n" +
	"\t`id` text PRIMARY KEY,\n" +
	"\t`session_id` text NOT NULL,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\t`data` text NOT NULL,\n" +
	"\tCONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE\n" +
	");\n" +
	"CREATE TABLE `part` (\n" +
	"\t`id` text PRIMARY KEY,\n" +
	"\t`message_id` text NOT NULL,\n" +
	"\t`session_id` text NOT NULL,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\t`data` text NOT NULL,\n" +
	"\tCONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE\n" +
	");\n" +
	"CREATE TABLE `todo` (\n" +
	"\t`session_id` text NOT NULL,\n" +
	"\t`content` text NOT NULL,\n" +
	"\t`status` text NOT NULL,\n" +
	"\t`priority` text NOT NULL,\n" +
	"\t`position` integer NOT NULL,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\tCONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`),\n" +
	"\tCONSTRAINT `fk_todo_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE\n" +
	");\n" +
	"CREATE TABLE `permission` (\n" +
	"\t`project_id` text PRIMARY KEY,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\t`data` text NOT NULL,\n" +
	"\tCONSTRAINT `fk_permission_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE\n" +
	");\n" +
	"CREATE TABLE `session_share` (\n" +
	"\t`session_id` text PRIMARY KEY,\n" +
	"\t`id` text NOT NULL,\n" +
	"\t`secret` text NOT NULL,\n" +
	"\t`url` text NOT NULL,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\tCONSTRAINT `fk_session_share_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE\n" +
	");\n" +
	"CREATE TABLE `event` (\n" +
	"\t`id` text PRIMARY KEY,\n" +
	"\t`aggregate_id` text NOT NULL,\n" +
	"\t`seq` integer NOT NULL,\n" +
	"\t`type` text NOT NULL,\n" +
	"\t`data` text NOT NULL\n" +
	");\n" +
	"CREATE TABLE `session_message` (\n" +
	"\t`id` text PRIMARY KEY,\n" +
	"\t`session_id` text NOT NULL,\n" +
	"\t`type` text NOT NULL,\n" +
	"\t`seq` integer NOT NULL,\n" +
	"\t`time_created` integer NOT NULL,\n" +
	"\t`time_updated` integer NOT NULL,\n" +
	"\t`data` text NOT NULL\n" +
	");\n" +
	"CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);\n" +
	"CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);\n" +
	"CREATE INDEX `part_session_idx` ON `part` (`session_id`);\n" +
	"CREATE INDEX `session_project_idx` ON `session` (`project_id`);\n" +
	"CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);\n" +
	"CREATE INDEX `todo_session_idx` ON `todo` (`session_id`);\n" +
	"CREATE UNIQUE INDEX `event_aggregate_seq_idx` ON `event` (`aggregate_id`,`seq`);\n"
