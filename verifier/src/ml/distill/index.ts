export { distillHead, type DistillLoss } from "./loss.ts";
export { DistilledTransformer } from "./model.ts";
export { decodeTeacher, DistillTeacherError, teacherShape } from "./teacher.ts";
