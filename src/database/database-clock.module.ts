import { Module } from '@nestjs/common';
import { DatabaseClock } from './database-clock';

/**
 * The replica's one `DatabaseClock` (one anchor, one measurement at bootstrap and at most one a minute), for every
 * module that stamps or compares database times; providing it in each module made one clock per module.
 */
@Module({ providers: [DatabaseClock], exports: [DatabaseClock] })
export class DatabaseClockModule {}
