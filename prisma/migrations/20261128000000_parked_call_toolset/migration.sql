-- A call parked through a toolset keeps the toolset and the name the model called the tool by, so that its
-- decision answers and announces it as the call was made (tool is the real one, as in the audit row).
ALTER TABLE "parked_calls" ADD COLUMN "toolset" TEXT;
ALTER TABLE "parked_calls" ADD COLUMN "exposed_tool" TEXT;
