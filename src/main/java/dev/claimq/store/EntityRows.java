package dev.claimq.store;

import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Transient;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads rows of a table into its entity by the entity's own mapping (each field's {@code @Column}
 * name, or its field name, and its {@code @Convert}er), so the statements run through {@link Sql}
 * and Hibernate's browsing share one mapping per table instead of keeping two in step.
 */
final class EntityRows<T> implements Sql.RowMapper<T> {
  private record Mapped(Field field, String column, AttributeConverter<Object, Object> converter) {}

  private final Class<T> type;
  private final List<Mapped> columns = new ArrayList<>();

  private EntityRows(Class<T> type) {
    this.type = type;
    for (Field field : type.getDeclaredFields()) {
      if (Modifier.isStatic(field.getModifiers()) || field.isSynthetic()) {
        continue;
      }
      // Hibernate's bytecode enhancement adds fields of its own ($$_hibernate_...): not columns.
      if (field.getName().startsWith("$$") || field.isAnnotationPresent(Transient.class)) {
        continue;
      }
      Column column = field.getAnnotation(Column.class);
      String name = column != null && !column.name().isEmpty() ? column.name() : field.getName();
      field.setAccessible(true);
      columns.add(new Mapped(field, name, converter(field)));
    }
  }

  static <T> EntityRows<T> of(Class<T> type) {
    return new EntityRows<>(type);
  }

  @Override
  public T map(ResultSet row) throws SQLException {
    try {
      T entity = type.getDeclaredConstructor().newInstance();
      for (Mapped column : columns) {
        Object value = read(row, column.column(), column.field().getType());
        if (column.converter() != null) {
          value = column.converter().convertToEntityAttribute(value);
        }
        if (value != null || !column.field().getType().isPrimitive()) {
          column.field().set(entity, value);
        }
      }
      return entity;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make a " + type.getSimpleName() + " of a row", e);
    }
  }

  private static Object read(ResultSet row, String column, Class<?> fieldType) throws SQLException {
    if (fieldType == Instant.class) {
      OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
      return value == null ? null : value.toInstant();
    }
    if (fieldType == int.class || fieldType == Integer.class) {
      return row.getObject(column, Integer.class);
    }
    if (fieldType == long.class || fieldType == Long.class) {
      return row.getObject(column, Long.class);
    }
    if (fieldType == boolean.class || fieldType == Boolean.class) {
      return row.getObject(column, Boolean.class);
    }
    return row.getString(column); // text, and the database side of a converter
  }

  @SuppressWarnings("unchecked")
  private static AttributeConverter<Object, Object> converter(Field field) {
    Convert convert = field.getAnnotation(Convert.class);
    if (convert == null || convert.converter() == AttributeConverter.class) {
      return null;
    }
    try {
      return (AttributeConverter<Object, Object>)
          convert.converter().getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make " + convert.converter(), e);
    }
  }
}
