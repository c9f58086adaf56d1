import { describe, expect, test } from "bun:test";
import { CronJobs } from "../../src/scheduler/cron.ts";
import { createLogger } from "../../src/shared/log.ts";
import { eventually } from "../harness.ts";

describe("happy", () => {
  test("a job runs on its pattern while started, survives its own failures, and stops with stop()", async () => {
    const cron = new CronJobs(createLogger("silent"));
    let runs = 0;
    cron.every("flaky-clean-up", "* * * * * *", () => {
      runs++;
      throw new Error("clean-up failed"); // logged, never fatal
    });
    expect(cron.names()).toEqual(["flaky-clean-up"]);
    cron.start();
    await eventually(() => runs >= 2, 3_500);
    await cron.stop(100);
    const after = runs;
    await Bun.sleep(1_100);
    expect(runs).toBe(after);
  });
});

describe("errors", () => {
  test("a bad pattern or a duplicate name is refused at registration", () => {
    const cron = new CronJobs(createLogger("silent"));
    expect(() => cron.every("x", "not a pattern", () => {})).toThrow();
    cron.every("x", "0 * * * *", () => {});
    expect(() => cron.every("x", "0 * * * *", () => {})).toThrow("already registered");
  });
});
