"""The interactions desk: the pages, the API, their forms, the AWS Support sync and its tasks, the lessons search,
tag suggestions and the organization page's section. The package's own: other apps use the interactions' models,
services and hooks, never the desk (an import contract keeps it so)."""
