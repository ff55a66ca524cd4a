// Cron arithmetic as a port: the slot planner asks a calendar for the next and previous
// slots of an expression in a time zone. cron-parser implements it (adapters/cron).
import type { SlotCalendar } from '../domain/schedule.ts';

export type CalendarFactory = (cron: string, timezone: string) => SlotCalendar;
