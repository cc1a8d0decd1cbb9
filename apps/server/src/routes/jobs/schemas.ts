import { z } from "@hono/zod-openapi";
import { Id, Job } from "@tern/protocol";
import { BooleanFlag, IdsParam } from "../../http/ids-query.ts";
import { AfterParam, ListQuerySchema } from "../../http/list-query.ts";

export const JobSchema = Job.meta({ id: "Job" });

export const JobListQuery = ListQuerySchema.extend({
  ids: IdsParam.optional(),
  group: Id.optional().meta({ description: "A job group (the Location of a bulk approval): only its jobs" }),
  ...AfterParam,
});

export const DeleteJobsQuery = z.object({
  filter: ListQuerySchema.shape.filter,
  filters: ListQuerySchema.shape.filters,
  ids: IdsParam.optional(),
  all: BooleanFlag.meta({ description: "true: with no filter and no ids, delete every job of the organization" }),
});

export const JobsDeletedSchema = z.object({ deleted: z.number().int().min(0) }).meta({ id: "JobsDeleted" });
