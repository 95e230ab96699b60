package oc2fixture

// The OpenCode 2 tables, as anomalyco/opencode creates them:
//
//   - session_v2, the new session_message (foreign key to session_v2),
//     session_pending and kv: migration 20260804233008_loose_psylocke
//     (packages/core/src/database/migration/, commit 7656aeb66d51), which
//     also adds event.created and drops data_migration,
//     session_context_epoch and session_input;
//   - session_v2.resume_attempts: 20260811161259_execution_claim_attempts
//     (commit a00f6c10b2ab);
//   - session_v2.time_idle, time_viewed, idle_outcome, the session_inbox
//     table and project.time_active: as captured from OpenCode 2.0.25
//     databases (their migration files are not in the source this follows).
//
// Column order follows the 2.0.25 capture.

const ddlSessionV2 = "CREATE TABLE `session_v2` (\n" +
	"          `id` text PRIMARY KEY,\n" +
	"          `project_id` text NOT NULL,\n" +
	"          `workspace_id` text,\n" +
	"          `parent_id` text,\n" +
	"          `fork_session_id` text,\n" +
	"          `fork_boundary` text,\n" +
	"          `slug` text NOT NULL,\n" +
	"          `directory` text NOT NULL,\n" +
	"          `path` text,\n" +
	"          `title` text,\n" +
	"          `version` text NOT NULL,\n" +
	"          `share_url` text,\n" +
	"          `summary_additions` integer,\n" +
	"          `summary_deletions` integer,\n" +
	"          `summary_files` integer,\n" +
	"          `summary_diffs` text,\n" +
	"          `metadata` text,\n" +
	"          `cost` real DEFAULT 0 NOT NULL,\n" +
	"          `tokens_input` integer DEFAULT 0 NOT NULL,\n" +
	"          `tokens_output` integer DEFAULT 0 NOT NULL,\n" +
	"          `tokens_reasoning` integer DEFAULT 0 NOT NULL,\n" +
	"          `tokens_cache_read` integer DEFAULT 0 NOT NULL,\n" +
	"          `tokens_cache_write` integer DEFAULT 0 NOT NULL,\n" +
	"          `revert` text,\n" +
	"          `permission` text,\n" +
	"          `agent` text,\n" +
	"          `model` text,\n" +
	"          `time_created` integer NOT NULL,\n" +
	"          `time_updated` integer NOT NULL,\n" +
	"          `time_idle` integer,\n" +
	"          `time_viewed` integer,\n" +
	"          `idle_outcome` text,\n" +
	"          `time_compacting` integer,\n" +
	"          `time_archived` integer,\n" +
	"          `time_suspended` integer,\n" +
	"          `resume_attempts` integer DEFAULT 0 NOT NULL,\n" +
	"          CONSTRAINT `fk_session_v2_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE\n" +
	"        )"

var ddl2x = []string{
	ddlSessionV2,
	"CREATE INDEX `session_v2_project_idx` ON `session_v2` (`project_id`)",
	"CREATE INDEX `session_v2_workspace_idx` ON `session_v2` (`workspace_id`)",
	"CREATE INDEX `session_v2_parent_idx` ON `session_v2` (`parent_id`)",
	"CREATE INDEX `session_v2_time_suspended_idx` ON `session_v2` (`time_suspended`) WHERE \"session_v2\".\"time_suspended\" is not null",
	"CREATE TABLE `session_message` (\n" +
		"          `id` text PRIMARY KEY,\n" +
		"          `session_id` text NOT NULL,\n" +
		"          `type` text NOT NULL,\n" +
		"          `seq` integer NOT NULL,\n" +
		"          `time_created` integer NOT NULL,\n" +
		"          `time_updated` integer NOT NULL,\n" +
		"          `data` text NOT NULL,\n" +
		"          CONSTRAINT `fk_session_message_session_id_session_v2_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session_v2`(`id`) ON DELETE CASCADE\n" +
		"        )",
	"CREATE UNIQUE INDEX `session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`)",
	"CREATE INDEX `session_message_session_type_seq_idx` ON `session_message` (`session_id`,`type`,`seq`)",
	"CREATE INDEX `session_message_session_time_created_id_idx` ON `session_message` (`session_id`,`time_created`,`id`)",
	"CREATE INDEX `session_message_time_created_idx` ON `session_message` (`time_created`)",
	"CREATE TABLE `session_inbox` (\n" +
		"          `id` text PRIMARY KEY,\n" +
		"          `session_id` text NOT NULL,\n" +
		"          `type` text NOT NULL,\n" +
		"          `payload` text NOT NULL,\n" +
		"          `delivery` text NOT NULL,\n" +
		"          `enqueued_seq` integer NOT NULL,\n" +
		"          `time_created` integer NOT NULL,\n" +
		"          CONSTRAINT `fk_session_inbox_session_id_session_v2_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session_v2`(`id`) ON DELETE CASCADE\n" +
		"        )",
	"CREATE UNIQUE INDEX `session_inbox_session_enqueued_seq_idx` ON `session_inbox` (`session_id`,`enqueued_seq`)",
	"CREATE TABLE `session_pending` (\n" +
		"          `id` text PRIMARY KEY,\n" +
		"          `session_id` text NOT NULL,\n" +
		"          `type` text NOT NULL,\n" +
		"          `data` text NOT NULL,\n" +
		"          `delivery` text,\n" +
		"          `admitted_seq` integer NOT NULL,\n" +
		"          `time_created` integer NOT NULL,\n" +
		"          CONSTRAINT `fk_session_pending_session_id_session_v2_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session_v2`(`id`) ON DELETE CASCADE\n" +
		"        )",
	"CREATE UNIQUE INDEX `session_pending_session_admitted_seq_idx` ON `session_pending` (`session_id`,`admitted_seq`)",
	"CREATE TABLE `kv` (\n" +
		"          `key` text PRIMARY KEY,\n" +
		"          `value` text NOT NULL,\n" +
		"          `time_created` integer NOT NULL,\n" +
		"          `time_updated` integer NOT NULL\n" +
		"        )",
}

// upgrade turns a 1.18 database into the 2.x layout: the 1.x tables stay
// (frozen), the 1.x session_message (always empty in 1.x) is replaced by
// 2.x's, and the 2.x tables are added.
var upgrade = append([]string{
	"DROP TABLE IF EXISTS `session_message`",
	"DROP TABLE IF EXISTS `data_migration`",
	"DROP TABLE IF EXISTS `session_context_epoch`",
	"DROP TABLE IF EXISTS `session_input`",
	"ALTER TABLE `project` ADD `time_active` integer DEFAULT 0 NOT NULL",
	"ALTER TABLE `event` ADD `created` integer DEFAULT 0 NOT NULL",
}, ddl2x...)

// native creates a database OpenCode 2 made from scratch: no 1.x tables.
// Tables 2.x has that sessions do not use (account, credential,
// permission, workspace, instruction_*) are left out.
var native = append([]string{
	"CREATE TABLE `project` (\n" +
		"          `id` text PRIMARY KEY,\n" +
		"          `worktree` text NOT NULL,\n" +
		"          `vcs` text,\n" +
		"          `name` text,\n" +
		"          `icon_url` text,\n" +
		"          `icon_url_override` text,\n" +
		"          `icon_color` text,\n" +
		"          `time_created` integer NOT NULL,\n" +
		"          `time_updated` integer NOT NULL,\n" +
		"          `time_initialized` integer,\n" +
		"          `time_active` integer DEFAULT 0 NOT NULL,\n" +
		"          `sandboxes` text NOT NULL,\n" +
		"          `commands` text\n" +
		"        )",
	"CREATE TABLE `event_sequence` (\n" +
		"          `aggregate_id` text PRIMARY KEY,\n" +
		"          `seq` integer NOT NULL,\n" +
		"          `owner_id` text\n" +
		"        )",
	"CREATE TABLE `event` (\n" +
		"          `id` text PRIMARY KEY,\n" +
		"          `aggregate_id` text NOT NULL,\n" +
		"          `seq` integer NOT NULL,\n" +
		"          `created` integer DEFAULT 0 NOT NULL,\n" +
		"          `type` text NOT NULL,\n" +
		"          `data` text NOT NULL,\n" +
		"          CONSTRAINT `fk_event_aggregate_id_event_sequence_aggregate_id_fk` FOREIGN KEY (`aggregate_id`) REFERENCES `event_sequence`(`aggregate_id`) ON DELETE CASCADE\n" +
		"        )",
	"CREATE UNIQUE INDEX `event_aggregate_seq_idx` ON `event` (`aggregate_id`,`seq`)",
}, ddl2x...)
