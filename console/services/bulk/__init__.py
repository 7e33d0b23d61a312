"""Bulk operations over granules (the operator's console): a job over a query or an id list,
with a dry run, per-item outcomes and cancel.

- selection: by_query(params), by_ids([(line, value)]), lines_of_upload(file) -> Selection
- jobs: dry_run, create, cancel, with_counts, target_group
- runner: run(job_id) (the task), sweep() (beat)
- actions: what each kind does to one granule
"""
